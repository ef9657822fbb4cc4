package main

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/learn-idempotency/learn/internal/uitest"
)

// waitExit returns once one of the processes pids has exited (or none of
// them is left to wait for), woken by the exit itself: a pidfd of each
// becomes readable when its process ends, whoever its parent is.
func waitExit(t testing.TB, pids []int) {
	t.Helper()
	var fds []unix.PollFd
	defer func() {
		for _, fd := range fds {
			_ = unix.Close(int(fd.Fd))
		}
	}()
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			return // gone already
		}
		if err != nil {
			t.Fatalf("pidfd_open %d: %v", pid, err)
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	if len(fds) == 0 {
		return
	}
	for {
		_, err := unix.Poll(fds, -1)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				t.Fatalf("poll: %v", err)
			}
			return
		}
	}
}

// fileWatch hears the changes of the files in one directory (inotify):
// each file written and closed, or moved in, wakes it.
type fileWatch struct{ fd int }

// watchDir starts hearing the changes of the files in dir; what dir holds
// already is read by the first check of a wait.
func watchDir(t testing.TB, dir string) *fileWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO|unix.IN_CREATE); err != nil {
		t.Fatalf("inotify %s: %v", dir, err)
	}
	return &fileWatch{fd: fd}
}

// until returns once ok holds, checking it at once and again at each
// change in the directory; it fails with failure's words shortly before
// the test binary's -timeout.
func (w *fileWatch) until(t *testing.T, ok func() bool, failure func() string) {
	t.Helper()
	guard, stop := uitest.Guard(t)
	defer stop()
	changed := make(chan error, 1)
	buf := make([]byte, 64<<10)
	for !ok() {
		go func() { // one read at a time; the next check follows it
			_, err := unix.Read(w.fd, buf)
			changed <- err
		}()
		select {
		case err := <-changed:
			if err != nil && !errors.Is(err, unix.EINTR) {
				t.Fatalf("inotify: %v", err)
			}
		case <-guard:
			t.Fatal(failure())
		}
	}
}
