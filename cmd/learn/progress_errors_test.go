//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The hostile trial, end to end: learn progress and export hung on a named
// pipe in place of the progress file; XDG_STATE_HOME under a file said
// only "not a directory"; reset of an immutable file only "operation not
// permitted". Each now exits 1 with one line on stderr saying what to do,
// and the file is still there.
func TestProgressCommandErrorsSayWhatToDo(t *testing.T) {
	t.Run("a named pipe", func(t *testing.T) {
		state := t.TempDir()
		t.Setenv("XDG_STATE_HOME", state)
		path := filepath.Join(state, "learn", "progress.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"progress"}, {"progress", "export"}} {
			code, _, errs := runCLI(t, args...)
			want := "learn: cannot read the progress file " + path + ": it is a named pipe (FIFO), not a regular file; move it away, or set XDG_STATE_HOME to another directory\n"
			if code != 1 || errs != want {
				t.Errorf("learn %s: exit %d, stderr %q; want 1, %q", strings.Join(args, " "), code, errs, want)
			}
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the pipe is gone: %v", err)
		}
	})
	t.Run("XDG_STATE_HOME under a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "passwd")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("XDG_STATE_HOME", filepath.Join(file, "x"))
		for _, args := range [][]string{{"progress"}, {"progress", "reset", "--yes"}} {
			code, _, errs := runCLI(t, args...)
			want := file + " is a file, not a directory; set XDG_STATE_HOME to a directory learn may write\n"
			if code != 1 || !strings.HasSuffix(errs, want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("learn %s: exit %d, stderr %q; want 1 and one line ending %q", strings.Join(args, " "), code, errs, want)
			}
		}
	})
	t.Run("reset of an immutable file", func(t *testing.T) {
		state := t.TempDir()
		t.Setenv("XDG_STATE_HOME", state)
		path := filepath.Join(state, "learn", "progress.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(`{"version": 2}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
			t.Skipf("chattr +i (needs Linux, root and a file system that has it): %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() }) // before the directory goes
		code, _, errs := runCLI(t, "progress", "reset", "--yes")
		want := "learn: reset progress: cannot remove " + path + ": operation not permitted; check that you may write in " + filepath.Dir(path) +
			" (ls -ld), and on Linux that the file is not immutable (lsattr; chattr -i to undo), then reset again\n"
		if code != 1 || errs != want {
			t.Errorf("learn progress reset --yes: exit %d, stderr %q; want 1, %q", code, errs, want)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("the file is gone: %v", err)
		}
	})
}
