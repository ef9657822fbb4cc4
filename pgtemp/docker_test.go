//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// needDocker returns a daemon that answers, or skips the test when there is
// none. Under LEARN_CI (set by .ci/run) a missing daemon fails the test:
// CI installs and starts Docker, so the Docker way must be tested there.
func needDocker(t *testing.T) *dockerDaemon {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := findDockerDaemon(ctx)
	if err != nil {
		if os.Getenv("LEARN_CI") != "" {
			t.Fatalf("LEARN_CI is set and Docker does not answer: %v", err)
		}
		t.Skipf("no Docker daemon: %v", err)
	}
	t.Cleanup(func() { d.cli.Close() })
	return d
}

// noDaemon points DOCKER_HOST at a socket where nothing listens.
func noDaemon(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	return sock
}

// ours lists the containers this test process made (any learn run).
func ours(t *testing.T, cli *client.Client, label string) []container.Summary {
	t.Helper()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func ourPIDLabel() string { return labelOwnerPID + "=" + strconv.Itoa(os.Getpid()) }

// Start in Docker mode: the server answers, NewSchema
// works, the port is published on loopback only, and Close removes the
// container and its volume.
func TestDockerStartsQueriesAndLeavesNothing(t *testing.T) {
	d := needDocker(t)
	ensureTestImage(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	s, err := Start(ctx, Options{Mode: Docker, Logf: t.Logf})
	if err != nil {
		t.Fatalf("Start(Docker): %v", err)
	}
	defer s.Close()
	t.Logf("%s, ready in %s", s.Describe(), s.ReadyIn())
	if s.Mode() != Docker || !strings.Contains(s.Describe(), DockerImage()) || strings.Contains(s.Describe(), "password") {
		t.Errorf("Mode %s, Describe %q", s.Mode(), s.Describe())
	}

	var one int
	if err := queryOne(t, s.ConnString(), "SELECT 1", &one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %v", err)
	}
	sc, err := s.NewSchema(ctx)
	if err != nil {
		t.Fatalf("NewSchema: %v", err)
	}
	conn, err := pgx.Connect(ctx, sc.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	var where string
	_, err = conn.Exec(ctx, "CREATE TABLE seats (n int); INSERT INTO seats VALUES (2)")
	if err == nil {
		err = conn.QueryRow(ctx, "SELECT table_schema FROM information_schema.tables WHERE table_name = 'seats'").Scan(&where)
	}
	conn.Close(ctx)
	if err != nil || where != sc.Name() {
		t.Fatalf("table in schema %q, want %q: %v", where, sc.Name(), err)
	}

	run := labelRun + "=" + s.docker.runID
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
	if _, err := s.NewSchema(ctx); err == nil {
		t.Errorf("NewSchema after Close worked")
	}
}

// A Docker client without a daemon gives a clear error at once, wrapping
// ErrNoPostgres, and never panics.
func TestDockerWithoutDaemonSaysSoFast(t *testing.T) {
	sock := noDaemon(t)
	_, err := Start(context.Background(), Options{Mode: Docker, Logf: t.Logf})
	if !errors.Is(err, ErrNoPostgres) || !errors.Is(err, ErrNoDocker) {
		t.Fatalf("Start(Docker) without a daemon = %v; want ErrNoPostgres", err)
	}
	for _, want := range []string{sock, "DOCKER_HOST", "start the Docker daemon", "leave out --postgres docker", "DATABASE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%v", want, err)
		}
	}
	t.Logf("the user sees:\n%v", err)

	// A socket file where nothing listens any more.
	os.WriteFile(sock, nil, 0o600)
	_, err = Start(context.Background(), Options{Mode: Docker})
	if !errors.Is(err, ErrNoPostgres) {
		t.Errorf("Start(Docker) on a dead socket = %v", err)
	}
}

// In Auto, with no URL and no local binaries, Docker is the way when a
// daemon answers; a dead daemon falls through to the no-PostgreSQL message
// (TestNothingWorks).
func TestAutoFallsBackToDocker(t *testing.T) {
	d := needDocker(t)
	ensureTestImage(t, d)
	nothing := &finder{
		lookPath: func(string) (string, error) { return "", errors.New("not found") },
		bindir:   func() string { return "" },
		glob:     func(string) ([]string, error) { return nil, nil },
		version:  func(string) (string, error) { return "", errors.New("no postgres") },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Mode: Auto, finder: nothing, Logf: t.Logf})
	if err != nil {
		t.Fatalf("Start(Auto) with Docker only: %v", err)
	}
	run := labelRun + "=" + s.docker.runID
	if s.Mode() != Docker {
		t.Errorf("Mode = %s, want docker", s.Mode())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := ours(t, d.cli, run); len(left) != 0 {
		t.Errorf("%d containers remain after Close", len(left))
	}
}

// An image that is not here and cannot be pulled is reported with what to
// do, and leaves nothing.
func TestDockerMissingImageSaysWhatToDo(t *testing.T) {
	d := needDocker(t)
	t.Setenv(DockerImageEnv, "learn-test/no-such-image:never")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Start(ctx, Options{Mode: Docker, Logf: t.Logf})
	if err == nil || !strings.Contains(err.Error(), "learn-test/no-such-image:never") || !strings.Contains(err.Error(), DockerImageEnv) {
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
	c, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: DockerImage()}})
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

	t.Setenv(DockerImageEnv, broken)
	t0 := time.Now()
	_, err = Start(ctx, Options{Mode: Docker, Logf: t.Logf})
	if err == nil || !strings.Contains(err.Error(), "exit code 3") || !strings.Contains(err.Error(), "FATAL: this image has no PostgreSQL") {
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
		s, err := Start(ctx, Options{Mode: Docker})
		cancel()
		if err == nil {
			t.Logf("cancel after %s: started before the cancel", after)
			s.Close()
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cancel after %s: %v; want the context's error", after, err)
		}
		if left := ours(t, d.cli, ourPIDLabel()); len(left) != 0 {
			t.Errorf("cancel after %s: %d containers of this process remain", after, len(left))
			removeByLabel(context.Background(), d.cli, ourPIDLabel())
		}
	}
}

// The containers of learn processes that are gone are removed, by the next
// Docker start and by reapDocker; the container of a learn that runs, or of
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
			removeByLabel(context.Background(), d.cli, labelRun+"="+r)
		}
	})
	create := func(labels map[string]string) {
		t.Helper()
		_, err := d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Config: &container.Config{Image: DockerImage(), Labels: labels, Cmd: []string{"postgres"}},
			Name:   "learn-postgres-" + labels[labelRun],
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []map[string]string{mine, gone, reused, elsewhere} {
		create(l)
	}

	found, err := reapDocker(ctx, d.cli, t.Logf)
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
	s, err := Start(ctx, Options{Mode: Docker, Logf: t.Logf})
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
func ensureTestImage(t *testing.T, d *dockerDaemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dockerPullTimeout)
	defer cancel()
	if err := ensureImage(ctx, d.cli, DockerImage(), t.Logf); err != nil {
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
	if bootID() != "" {
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

func TestDockerEndpoints(t *testing.T) {
	t.Setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
	if eps := dockerEndpoints(); len(eps) != 1 || eps[0].host != "tcp://127.0.0.1:1" || eps[0].source != "DOCKER_HOST" {
		t.Errorf("with DOCKER_HOST set: %v; want only it", eps)
	}
	t.Setenv("DOCKER_HOST", "")
	for _, ep := range dockerEndpoints() {
		if !strings.HasPrefix(ep.host, "unix:///") {
			t.Errorf("endpoint %v is not an absolute socket path", ep)
		}
	}
}

func TestDockerImageFromEnvironment(t *testing.T) {
	t.Setenv(DockerImageEnv, "")
	if DockerImage() != DefaultDockerImage || DefaultDockerImage != "postgres:17-alpine" {
		t.Errorf("DockerImage() = %q without %s", DockerImage(), DockerImageEnv)
	}
	t.Setenv(DockerImageEnv, "example/pg:1")
	if DockerImage() != "example/pg:1" {
		t.Errorf("DockerImage() = %q", DockerImage())
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

func queryOne(t *testing.T, connString, sql string, dst any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dst)
}
