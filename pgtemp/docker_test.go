//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/docker"
	"github.com/learn-idempotency/learn/pgtemp/local"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// The Docker way's own tests are package docker's; these are the ones that
// go through Start, Auto and Probe.

// The labels of learn's containers (package docker).
const (
	labelRun      = "learn.run"
	labelOwnerPID = "learn.owner.pid"
)

// dockerCLI is a client of the daemon the tests use.
type dockerCLI struct {
	cli  *client.Client
	host string
}

// needDocker returns a client of the daemon at DOCKER_HOST or the default
// socket, or skips the test when none answers. Under LEARN_CI (set by
// .ci/run) a missing daemon fails the test: CI installs and starts Docker,
// so the Docker way must be tested there.
func needDocker(t *testing.T) *dockerCLI {
	t.Helper()
	cli, err := client.New(client.FromEnv)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
		cancel()
	}
	if err != nil {
		if os.Getenv("LEARN_CI") != "" {
			t.Fatalf("LEARN_CI is set and Docker does not answer: %v", err)
		}
		t.Skipf("no Docker daemon: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return &dockerCLI{cli: cli, host: cli.DaemonHost()}
}

// ensureTestImage skips the test (fails it under LEARN_CI) unless the
// daemon has the image the Docker way runs (see .ci/postgres-image.sh).
func ensureTestImage(t *testing.T, d *dockerCLI) {
	t.Helper()
	if _, err := d.cli.ImageInspect(context.Background(), DockerImage()); err != nil {
		if os.Getenv("LEARN_CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("the image %s is not here (%v): build one with .ci/postgres-image.sh and set %s", DockerImage(), err, DockerImageEnv)
	}
}

// noDaemon points DOCKER_HOST at a socket where nothing listens.
func noDaemon(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	return sock
}

// ours lists the containers with the label.
func ours(t *testing.T, cli *client.Client, label string) []container.Summary {
	t.Helper()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// ourPIDLabel selects the containers this test process made.
func ourPIDLabel() string { return labelOwnerPID + "=" + strconv.Itoa(os.Getpid()) }

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
	nothing := &local.Finder{
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Bindir:   func() string { return "" },
		Glob:     func(string) ([]string, error) { return nil, nil },
		Version:  func(string) (string, error) { return "", errors.New("no postgres") },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Mode: Auto, finder: nothing, Logf: t.Logf})
	if err != nil {
		t.Fatalf("Start(Auto) with Docker only: %v", err)
	}
	run := labelRun + "=" + s.inst.Impl.(*docker.Container).RunID()
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
