//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
)

// mountTmpfs mounts a tmpfs of size (e.g. "1m") with extra options (e.g.
// "ro") on a new directory and returns it; the test's cleanup unmounts it.
// Mounting needs root: the test skips without it.
func mountTmpfs(t *testing.T, size, extra string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	// A short path, so that a cluster's socket path fits under it, that
	// the cluster user (learn as root runs it as postgres) can reach.
	dir, err := os.MkdirTemp("", "pgtemp-test-mnt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) }) // after the unmount below
	opts := "size=" + size + ",mode=0755"
	if extra != "" {
		opts += "," + extra
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// readOnlyDir returns a directory learn cannot write in: a tmpfs mounted
// read-only as root (root writes through any mode), else a 0500 directory.
func readOnlyDir(t *testing.T) (dir, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return mountTmpfs(t, "64m", "ro"), "read-only file system"
	}
	dir = t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	return dir, "learn may not write in"
}

// A cold start that cannot save the template still starts, and says why the
// template was not saved (never that it was), with what initdb cost: every
// case where the cache cannot take it.
func TestColdStartSaysWhyNoTemplateWasSaved(t *testing.T) {
	needLocal(t)
	cases := []struct {
		name    string
		cache   func(t *testing.T) (cacheDir, why string)
		setsEnv bool // t.Setenv rules out t.Parallel
	}{
		{"a file in the way", func(t *testing.T) (string, string) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "learn"), "not a directory")
			return dir, filepath.Join(dir, "learn") + " is a file, not a directory"
		}, false},
		{"a read-only cache directory", func(t *testing.T) (string, string) { return readOnlyDir(t) }, false},
		{"a full cache directory", func(t *testing.T) (string, string) {
			return mountTmpfs(t, "1m", ""), "no space left on device in "
		}, false},
		{"no user cache directory", func(t *testing.T) (string, string) {
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("HOME", "")
			return "", "no user cache directory"
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.setsEnv {
				t.Parallel()
			}
			cache, why := c.cache(t)
			opts := isolated(t, cache)
			w := Probe(context.Background(), Local, opts, time.Minute)
			details := strings.Join(w.Details, "\n")
			if !w.Works || !w.Cold {
				t.Fatalf("Probe(Local) = %+v", w)
			}
			if w.TemplateErr == nil || !strings.Contains(w.TemplateErr.Error(), why) || w.InitdbTook <= 0 {
				t.Errorf("TemplateErr = %v, initdb took %s; want the reason %q and initdb's time", w.TemplateErr, w.InitdbTook, why)
			}
			if strings.Contains(details, "saves it there") || !strings.Contains(details, "every start runs initdb") {
				t.Errorf("the details promise a template that cannot be saved:\n%s", details)
			}
			if cache != "" {
				if m, _ := filepath.Glob(filepath.Join(cache, "learn", "pg-template-*")); len(m) > 0 {
					t.Errorf("left in the cache: %v", m)
				}
			}
		})
	}
}

// TestTemplateSaveErrorWords: each cause reads as what is wrong with the
// directory, and still wraps the system's error.
func TestTemplateSaveErrorWords(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "learn"), "x")
	dir := filepath.Join(home, "learn")
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}, dir + " is a file, not a directory"},
		{&os.PathError{Op: "open", Path: "/c/learn/x", Err: syscall.EROFS}, "/c/learn is on a read-only file system"},
		{&os.PathError{Op: "open", Path: "/c/learn/x", Err: syscall.EACCES}, "learn may not write in /c/learn"},
		{&os.PathError{Op: "write", Path: "/c/learn/x", Err: syscall.ENOSPC}, "no space left on device in /c/learn ("},
		{&os.PathError{Op: "write", Path: "/c/learn/x", Err: syscall.EDQUOT}, "no space left on device in /c/learn ("},
		{errors.New("something else"), "could not write it in /c/learn: something else"},
	} {
		d := "/c/learn"
		if errors.Is(tt.err, syscall.ENOTDIR) {
			d = dir
		}
		got := template.SaveError(d, tt.err)
		if !strings.HasPrefix(got.Error(), tt.want) || !errors.Is(got, tt.err) {
			t.Errorf("templateSaveError(%v) = %q, want it to start %q and wrap the cause", tt.err, got, tt.want)
		}
	}
}

// A local start in a directory without room fails with a *diskFullError
// naming that directory, whichever step runs out of room: making the
// cluster directory (no inodes left), copying the template (warm), or
// initdb (cold); and it leaves nothing there. A warm template is never
// discarded for it.
func TestFullClusterDirIsNamed(t *testing.T) {
	t.Parallel()
	bin := needLocal(t)
	warm := t.TempDir()
	s := startT(t, isolated(t, warm))
	s.Close()
	run, err := runas.Current()
	if err != nil {
		t.Fatal(err)
	}
	tmpl := template.Path(warm, bin.Major, run.UID)

	cases := []struct {
		name, size, extra, cache string
	}{
		{"no inode for the cluster directory", "64m", "nr_inodes=1", warm},
		{"the template copy", "1m", "", warm},
		{"initdb", "1m", "", t.TempDir()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full := mountTmpfs(t, c.size, c.extra)
			opts := isolated(t, c.cache)
			opts.tmpParent = full
			s, err := Start(context.Background(), opts)
			if err == nil {
				s.Close()
				t.Fatalf("Start in a full %s worked", full)
			}
			d, ok := errors.AsType[*clusterdir.DiskFullError](err)
			if !ok || d.Dir != full || !strings.HasPrefix(err.Error(), "no space left on device in "+full+" (") || !errors.Is(err, syscall.ENOSPC) && !strings.Contains(d.Err.Error(), "No space left") {
				t.Errorf("Start in a full directory = %v; want a *diskFullError naming %s", err, full)
			}
			if left, _ := os.ReadDir(full); len(left) > 0 {
				t.Errorf("left in %s: %v", full, left)
			}
			if p := processesUsing(full); len(p) > 0 {
				t.Errorf("processes left behind: %v", p)
			}
			if !template.Usable(tmpl, bin.Major) {
				t.Errorf("the warm template is gone")
			}
		})
	}
}

// TestNoPostgresErrorSaysTheFullDirectoryFirst: when the local binaries
// failed for want of room and nothing else worked, the message starts
// with the directory that is full and how to fix it, and does not tell to
// install binaries that are installed.
func TestNoPostgresErrorSaysTheFullDirectoryFirst(t *testing.T) {
	full := &clusterdir.DiskFullError{Dir: "/tmp/small", Err: syscall.ENOSPC}
	err := error(&noPostgresError{tried: []attempt{
		{"DATABASE_URL / --database-url", errors.New("not set")},
		{TitleLocal, fmt.Errorf("initdb failed: %w", full)},
		{"Docker", ErrNoDocker},
	}})
	msg := err.Error()
	if !strings.HasPrefix(msg, "no space left on device in /tmp/small (") || !errors.Is(err, ErrNoPostgres) || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("the message starts %q", strings.SplitN(msg, "\n", 2)[0])
	}
	if strings.Contains(msg, "install the PostgreSQL server binaries") || !strings.Contains(msg, "free some space in /tmp/small, or set TMPDIR") {
		t.Errorf("the fixes do not fit:\n%s", msg)
	}
}
