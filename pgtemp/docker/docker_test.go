//go:build linux

package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// needDocker returns a daemon that answers, or skips the test when there is
// none. Under LEARN_CI (set by .ci/run) a missing daemon fails the test:
// CI installs and starts Docker, so the Docker way must be tested there.
func needDocker(t *testing.T) *daemon {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := findDaemon(ctx)
	if err != nil {
		if os.Getenv("LEARN_CI") != "" {
			t.Fatalf("LEARN_CI is set and Docker does not answer: %v", err)
		}
		t.Skipf("no Docker daemon: %v", err)
	}
	t.Cleanup(d.close)
	return d
}

// ours lists the containers this test process made (any learn run).
func ours(t *testing.T, cli client.APIClient, label string) []container.Summary {
	t.Helper()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func ourPIDLabel() string { return labelOwnerPID + "=" + strconv.Itoa(os.Getpid()) }

// startT starts the Docker way with env (Logf to the test's log when nil).
func startT(ctx context.Context, t *testing.T, env way.Env) (*way.Instance, error) {
	t.Helper()
	if env.Logf == nil {
		env.Logf = t.Logf
	}
	env.Started = time.Now()
	return Way{}.Start(ctx, &env)
}

// Start in Docker mode: the server answers and keeps what it is given,
// the container carries learn's labels, the port is published on loopback
// only, and Close removes the container and its volume.
func TestDockerStartsQueriesAndLeavesNothing(t *testing.T) {
	d := needDocker(t)
	ensureTestImage(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	s, err := startT(ctx, t, way.Env{})
	if err != nil {
		t.Fatalf("Start(Docker): %v", err)
	}
	defer s.Close()
	t.Logf("%s", s.Describe)
	if !s.Disposable || !strings.Contains(s.Describe, Image()) || strings.Contains(s.Describe, "password") {
		t.Errorf("Disposable %v, Describe %q", s.Disposable, s.Describe)
	}

	conn, err := pgx.Connect(ctx, s.ConnString)
	if err != nil {
		t.Fatal(err)
	}
	var seats int
	_, err = conn.Exec(ctx, "CREATE TABLE seats (n int); INSERT INTO seats VALUES (2)")
	if err == nil {
		err = conn.QueryRow(ctx, "SELECT sum(n) FROM seats").Scan(&seats)
	}
	conn.Close(ctx)
	if err != nil || seats != 2 {
		t.Fatalf("seats = %d, want 2: %v", seats, err)
	}

	run := labelRun + "=" + s.Impl.(*Container).RunID()
	list := ours(t, d.cli, run)
	if len(list) != 1 {
		t.Fatalf("%d containers labelled %s, want 1", len(list), run)
	}
	for _, k := range []string{labelApp, labelOwnerPID, labelOwnerHost} {
		if list[0].Labels[k] == "" {
			t.Errorf("the container lacks the label %s: %v", k, list[0].Labels)
		}
	}
	inspect, err := d.cli.ContainerInspect(ctx, list[0].ID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var volumes []string
	for _, m := range inspect.Container.Mounts {
		if m.Type == "volume" {
			volumes = append(volumes, m.Name)
		}
	}
	if d.local() {
		for _, b := range inspect.Container.HostConfig.PortBindings {
			for _, pb := range b {
				if pb.HostIP.String() != "127.0.0.1" {
					t.Errorf("PostgreSQL is published on %s, not loopback only", pb.HostIP)
				}
			}
		}
	}

	t0 := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("Close took %s", time.Since(t0))
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if left := ours(t, d.cli, run); len(left) != 0 {
		t.Errorf("%d containers remain after Close", len(left))
	}
	for _, v := range volumes {
		if _, err := d.cli.VolumeInspect(context.Background(), v, client.VolumeInspectOptions{}); !cerrdefs.IsNotFound(err) {
			t.Errorf("volume %s remains after Close (%v)", v, err)
		}
	}
}

// An image that is not here and cannot be pulled is reported with what to
// do, and leaves nothing.
func TestDockerMissingImageSaysWhatToDo(t *testing.T) {
	d := needDocker(t)
	t.Setenv(ImageEnv, "learn-test/no-such-image:never")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := startT(ctx, t, way.Env{})
	if err == nil || !strings.Contains(err.Error(), "learn-test/no-such-image:never") || !strings.Contains(err.Error(), ImageEnv) {
		t.Fatalf("Start with a missing image = %v", err)
	}
	t.Logf("the user sees: %v", err)
	if left := ours(t, d.cli, ourPIDLabel()); len(left) != 0 {
		t.Errorf("%d containers of this process remain", len(left))
	}
}

// A container that dies before PostgreSQL answers (an image that is not
// PostgreSQL, a bad setting) is reported with the end of its log, at once,
// and removed.
func TestDockerContainerThatDiesSaysWhy(t *testing.T) {
	d := needDocker(t)
	ensureTestImage(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const broken = "learn-test/broken:1"
	c, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: Image()}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.cli.ContainerCommit(ctx, c.ID, client.ContainerCommitOptions{Reference: broken,
		Changes: []string{`ENTRYPOINT ["/bin/sh", "-c", "echo FATAL: this image has no PostgreSQL >&2; exit 3"]`}})
	d.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil {
		t.Skipf("cannot make a broken image here: %v", err)
	}
	t.Cleanup(func() {
		d.cli.ImageRemove(context.Background(), broken, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})

	t.Setenv(ImageEnv, broken)
	t0 := time.Now()
	_, err = startT(ctx, t, way.Env{})
	if err == nil || !strings.Contains(err.Error(), "code 3") || !strings.Contains(err.Error(), "FATAL: this image has no PostgreSQL") {
		t.Fatalf("Start with a dying container = %v", err)
	}
	t.Logf("the user sees, after %s: %v", time.Since(t0).Round(time.Millisecond), err)
	if left := ours(t, d.cli, ourPIDLabel()); len(left) != 0 {
		t.Errorf("%d containers of this process remain", len(left))
	}
}

// Cancelling Start at any moment leaves no container behind.
func TestDockerCancelledStartLeavesNothing(t *testing.T) {
	d := needDocker(t)
	ensureTestImage(t, d)
	for _, after := range []time.Duration{20 * time.Millisecond, 200 * time.Millisecond, 700 * time.Millisecond, 1500 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), after)
		s, err := startT(ctx, t, way.Env{Logf: func(string, ...any) {}})
		cancel()
		if err == nil {
			t.Logf("cancel after %s: started before the cancel", after)
			s.Close()
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cancel after %s: %v; want the context's error", after, err)
		}
		if left := ours(t, d.cli, ourPIDLabel()); len(left) != 0 {
			t.Errorf("cancel after %s: %d containers of this process remain", after, len(left))
			removeByLabel(context.Background(), d.cli.Client, ourPIDLabel())
		}
	}
}

// The containers of learn processes that are gone are removed, by the next
// Docker start and by reapContainers; the container of a learn that runs, or of
// another machine, is not.
func TestDockerReapsOrphansOnly(t *testing.T) {
	d := needDocker(t)
	ensureTestImage(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := dead.Process.Pid
	mine := ownerLabels("test-alive")
	gone := ownerLabels("test-gone")
	gone[labelOwnerPID] = strconv.Itoa(deadPID)
	delete(gone, labelOwnerStart)
	reused := ownerLabels("test-reused") // our pid, another start time
	reused[labelOwnerStart] = "1"
	elsewhere := ownerLabels("test-elsewhere")
	elsewhere[labelOwnerHost] = "another-machine"
	elsewhere[labelOwnerPID] = strconv.Itoa(deadPID)
	t.Cleanup(func() {
		for _, r := range []string{"test-alive", "test-gone", "test-reused", "test-elsewhere", "test-gone-2"} {
			removeByLabel(context.Background(), d.cli.Client, labelRun+"="+r)
		}
	})
	create := func(labels map[string]string) {
		t.Helper()
		_, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Config: &container.Config{Image: Image(), Labels: labels, Cmd: []string{"postgres"}},
			Name:   "learn-postgres-" + labels[labelRun],
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []map[string]string{mine, gone, reused, elsewhere} {
		create(l)
	}

	found, err := reapContainers(ctx, d.cli.Client, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	removed := map[string]bool{}
	for _, l := range found {
		t.Logf("%s", l)
		removed[strings.TrimPrefix(l.Name, "learn-postgres-")] = l.Removed
	}
	want := map[string]bool{"test-alive": false, "test-gone": true, "test-reused": true, "test-elsewhere": false}
	for run, w := range want {
		if got, ok := removed[run]; !ok || got != w {
			t.Errorf("%s: removed %v (seen %v), want removed %v", run, got, ok, w)
		}
		if left := len(ours(t, d.cli, labelRun+"="+run)); (left == 0) != w {
			t.Errorf("%s: %d containers remain", run, left)
		}
	}

	// The next Docker start removes an orphan too.
	gone2 := ownerLabels("test-gone-2")
	gone2[labelOwnerPID] = strconv.Itoa(deadPID)
	delete(gone2, labelOwnerStart)
	create(gone2)
	s, err := startT(ctx, t, way.Env{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if left := ours(t, d.cli, labelRun+"=test-gone-2"); len(left) != 0 {
		t.Errorf("Start did not remove the orphaned container")
	}
	if left := ours(t, d.cli, labelRun+"=test-alive"); len(left) != 1 {
		t.Errorf("Start removed the container of a live learn")
	}
}

// ensureTestImage makes sure the image is here, or skips the test (outside
// CI: a machine without a registry needs LEARN_POSTGRES_IMAGE, see
// .ci/postgres-image.sh).
func ensureTestImage(t *testing.T, d *daemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
	defer cancel()
	if err := ensureImage(ctx, d.cli.Client, Image(), t.Logf); err != nil {
		if os.Getenv("LEARN_CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func TestOwnerGone(t *testing.T) {
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	me := ownerLabels("x")
	with := func(k, v string) map[string]string {
		l := ownerLabels("x")
		if v == "" {
			delete(l, k)
		} else {
			l[k] = v
		}
		return l
	}
	tests := []struct {
		name   string
		labels map[string]string
		gone   bool
	}{
		{"this process", me, false},
		{"a dead pid", with(labelOwnerPID, strconv.Itoa(dead.Process.Pid)), true},
		{"our pid, another start time", with(labelOwnerStart, "1"), true},
		{"another host", with(labelOwnerHost, host+"-not"), false},
		{"no host label", with(labelOwnerHost, ""), false},
		{"no pid label", with(labelOwnerPID, ""), false},
		{"garbage pid", with(labelOwnerPID, "x"), false},
	}
	if owner.BootID() != "" {
		tests = append(tests, struct {
			name   string
			labels map[string]string
			gone   bool
		}{"an earlier boot", with(labelOwnerBoot, "not-this-boot"), true})
	}
	for _, tt := range tests {
		got, why := ownerGone(tt.labels)
		if got != tt.gone || why == "" {
			t.Errorf("%s: ownerGone = %v (%s), want %v", tt.name, got, why, tt.gone)
		}
	}
}

func TestDockerImageFromEnvironment(t *testing.T) {
	t.Setenv(ImageEnv, "")
	if Image() != DefaultImage || DefaultImage != "postgres:17-alpine" {
		t.Errorf("Image() = %q without %s", Image(), ImageEnv)
	}
	t.Setenv(ImageEnv, "example/pg:1")
	if Image() != "example/pg:1" {
		t.Errorf("Image() = %q", Image())
	}
}

func TestPanicInTheDockerClientBecomesAnError(t *testing.T) {
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = panicError(r)
			}
		}()
		panic("docker info: connection reset")
	}()
	if err == nil || !strings.Contains(err.Error(), "connection reset") || !strings.Contains(err.Error(), "--postgres local") {
		t.Errorf("recovered error = %v", err)
	}
}

// The reaper image learn looks for is the one testcontainers-go starts.
func TestRyukImageIsTestcontainers(t *testing.T) {
	if !strings.HasPrefix(ryukImage, "testcontainers/ryuk:") {
		t.Errorf("ryukImage = %q", ryukImage)
	}
}

func TestTestcontainersLinesGoToLogfUntilStartReturns(t *testing.T) {
	var got []string
	l := &tcLogger{logf: func(f string, a ...any) { got = append(got, fmt.Sprintf(f, a...)) }}
	l.Printf("🐳 Creating container for image %s", "postgres:17-alpine")
	l.Printf("⏳ Waiting for container id 0d5e image: x. Waiting for: &{timeout:<nil> Log:...}")
	l.stop()
	l.Printf("✅ Container terminated: 0d5e")
	want := []string{"docker: Creating container for image postgres:17-alpine", "docker: Waiting for container id 0d5e image: x."}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The current Docker context (Colima's, a remote host's) is where `docker`
// goes; learn reads its endpoint the way the CLI keeps it.
func TestDockerContextEndpoint(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	t.Setenv("DOCKER_CONTEXT", "")
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if name, host := dockerContext(); name != "" || host != "" {
		t.Errorf("without a config: %q %q", name, host)
	}
	write(filepath.Join(dir, "config.json"), `{"currentContext": "colima"}`)
	sum := sha256.Sum256([]byte("colima"))
	write(filepath.Join(dir, "contexts", "meta", hex.EncodeToString(sum[:]), "meta.json"),
		`{"Name":"colima","Endpoints":{"docker":{"Host":"unix:///Users/me/.colima/default/docker.sock","SkipTLSVerify":false}}}`)
	if name, host := dockerContext(); name != "colima" || host != "unix:///Users/me/.colima/default/docker.sock" {
		t.Errorf("current context colima: %q %q", name, host)
	}
	t.Setenv("DOCKER_CONTEXT", "default")
	if name, host := dockerContext(); host != "" {
		t.Errorf("DOCKER_CONTEXT=default: %q %q, want none", name, host)
	}
}
