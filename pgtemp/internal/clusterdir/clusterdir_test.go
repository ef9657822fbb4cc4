//go:build linux

package clusterdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
)

// TestClusterParent: TMPDIR, when set, wins; otherwise /dev/shm when it is
// a tmpfs with room; otherwise os.TempDir().
func TestClusterParent(t *testing.T) {
	run, err := runas.Current()
	if err != nil {
		t.Skip(err)
	}
	mine, err := os.MkdirTemp("", "pgtemp-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(mine) })
	os.Chmod(mine, 0o755) // the cluster user must be able to enter it
	t.Setenv("TMPDIR", mine)
	if got := Parent(); got != mine {
		t.Errorf("with TMPDIR=%s clusterParent() = %s", mine, got)
	}
	dir, err := Make("", run)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(dir)
	if filepath.Dir(dir) != mine {
		t.Errorf("with TMPDIR=%s makeClusterDir made %s", mine, dir)
	}

	t.Setenv("TMPDIR", "")
	want := "/tmp"
	if memDirUsable() {
		want = MemDir
	}
	t.Logf("memory directory %s usable: %v", MemDir, memDirUsable())
	if got := Parent(); got != want {
		t.Errorf("without TMPDIR clusterParent() = %s, want %s", got, want)
	}
	dir, err = Make("", run)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(dir)
	if filepath.Dir(dir) != want || len(filepath.Join(dir, SocketName)) > MaxSocketPath {
		t.Errorf("without TMPDIR makeClusterDir made %s, want a directory in %s", dir, want)
	}
}

// A TMPDIR where no directory can be made (read-only, or not a
// directory) does not stop learn: the cluster goes to /tmp instead.
func TestClusterDirFallsBackFromAnUnusableTMPDIR(t *testing.T) {
	run, err := runas.Current()
	if err != nil {
		t.Skip(err)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tmpdir := range []string{"/proc", file} {
		if _, err := os.Stat(tmpdir); err != nil {
			continue // no /proc here
		}
		t.Setenv("TMPDIR", tmpdir)
		dir, err := Make("", run)
		if err != nil {
			t.Errorf("TMPDIR=%s: %v; want a directory in /tmp", tmpdir, err)
			continue
		}
		os.Remove(dir)
		if filepath.Dir(dir) != "/tmp" {
			t.Errorf("TMPDIR=%s: makeClusterDir made %s, want one in /tmp", tmpdir, dir)
		}
	}
}

func TestClusterDirFallsBackToShortPath(t *testing.T) {
	run, err := runas.Current()
	if err != nil {
		t.Skip(err)
	}
	long := "/" + strings.Repeat("x", 120)
	dir, err := Make(long, run)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(dir)
	if !strings.HasPrefix(dir, "/tmp/learn-") || len(filepath.Join(dir, SocketName)) > MaxSocketPath {
		t.Errorf("makeClusterDir(%d-byte parent) = %s", len(long), dir)
	}
}

func TestClusterDirAvoidsParentsTheClusterUserCannotEnter(t *testing.T) {
	run, err := runas.Current()
	if err != nil || run.Cred == nil {
		t.Skip("only when learn runs as root")
	}
	private := t.TempDir() // 0700, owned by root
	if run.CanReach(private) {
		t.Fatalf("canReach(%s) = true for %s", private, run)
	}
	dir, err := Make(private, run)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(dir)
	if !strings.HasPrefix(dir, "/tmp/learn-") {
		t.Errorf("makeClusterDir(root-only parent) = %s, want one in /tmp", dir)
	}
}
