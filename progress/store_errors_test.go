package progress

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// oneLineWithNextStep fails t unless msg is one line that ends in want,
// names path once and says nothing of Go's.
func oneLineWithNextStep(t *testing.T, who, msg, want string) {
	t.Helper()
	if strings.Contains(msg, "\n") || !strings.HasSuffix(msg, want) || saysGo(msg) != "" {
		t.Errorf("%s: %q; want one line ending %q", who, msg, want)
	}
}

// The hostile trial: XDG_STATE_HOME=/etc/passwd/x gave "…: not a
// directory" (learn progress) and XDG_STATE_HOME=/proc/learnx "create the
// progress directory: mkdir /proc/learnx: no such file or directory" (the
// app), with nothing to do next. Now each names what is wrong and says to
// set XDG_STATE_HOME to a directory learn may write.
func TestStateDirectoryErrorsSayWhatToDo(t *testing.T) {
	const next = "set XDG_STATE_HOME to a directory learn may write"
	file := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Store{Path: filepath.Join(file, "x", "learn", FileName)}
	_, _, peekErr := s.Peek()
	_, updateErr := s.Update(func(*Progress) error { return nil })
	resetErr := s.Reset()
	for who, err := range map[string]error{"Peek": peekErr, "Update": updateErr, "Reset": resetErr} {
		if err == nil {
			t.Errorf("%s under a file: no error", who)
			continue
		}
		oneLineWithNextStep(t, who+" under a file", err.Error(), file+" is a file, not a directory; "+next)
	}

	if runtime.GOOS != "linux" {
		return
	}
	if fi, err := os.Stat("/proc/self"); err != nil || !fi.IsDir() {
		t.Skip("no /proc")
	}
	proc := &Store{Path: filepath.Join("/proc", "learn-test-nothing-here", "learn", FileName)}
	_, err := proc.Update(func(*Progress) error { return nil })
	if err == nil {
		t.Fatal("Update under /proc: no error")
	}
	oneLineWithNextStep(t, "Update under /proc", err.Error(), "learn cannot make "+filepath.Dir(proc.Path)+" there: "+next)
}

// The hostile trial: reset of a file marked immutable (chattr +i) said
// "learn: reset progress: remove …: operation not permitted" and no more.
// Now it says what to check and how to undo it. EPERM is what Linux gives
// for an immutable file, even to root; EACCES a directory learn may not
// write.
func TestResetErrorSaysWhatToDo(t *testing.T) {
	path := filepath.Join("/state", "learn", FileName)
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.EACCES} {
		err := resetError(path, &fs.PathError{Op: "remove", Path: path, Err: errno})
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("%v: the error does not wrap fs.ErrPermission", errno)
		}
		msg := err.Error()
		if strings.Count(msg, path) != 1 {
			t.Errorf("%v: %q names the path %d times, want once", errno, msg, strings.Count(msg, path))
		}
		oneLineWithNextStep(t, errno.Error(), msg, "check that you may write in /state/learn (ls -ld), and on Linux that the file is not immutable (lsattr; chattr -i to undo), then reset again")
	}
}
