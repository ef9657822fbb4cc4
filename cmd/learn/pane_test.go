package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/learn-idempotency/learn/internal/uitest"
)

// paneWatch hears each change of a tmux pane: tmux copies everything the
// pane's program writes (pipe-pane) into a FIFO, and a reader blocked on
// it wakes at each write. tmux parses what a program wrote into the pane's
// screen before it copies it on, so once the reader wakes, capture-pane
// shows the change: waits read the pane again at each change, never at a
// pace of their own.
type paneWatch struct {
	mu      sync.Mutex
	changed chan struct{} // closed, and made anew, at each write to the pane
}

// watchPane starts copying the output of the pane target into a FIFO and
// hearing it; tmux is the command line of the pane's tmux server. What the
// pane shows already is read by the first check of a wait; every change
// after this call wakes the watch. The copy ends with the test.
func watchPane(t testing.TB, tmux func(args ...string) *exec.Cmd, target string) *paneWatch {
	t.Helper()
	dir, err := os.MkdirTemp("", "learn-pane-")
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read and write: the open does not wait for tmux's writer, and the
	// reader never sees an end while the pane has not written yet.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := &paneWatch{changed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			w.mu.Lock()
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = tmux("pipe-pane", "-t", target).Run() // no command: the copy stops
		_ = f.Close()                             // the reader's Read ends
		<-done
		_ = os.RemoveAll(dir)
	})
	if out, err := tmux("pipe-pane", "-O", "-t", target, "exec cat > '"+fifo+"'").CombinedOutput(); err != nil {
		t.Fatalf("pipe-pane: %v\n%s", err, out)
	}
	return w
}

// next is closed at the pane's next change: take it before reading the
// pane, so that a change while the pane is read is not missed.
func (w *paneWatch) next() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// until returns once ok holds, checking it at once and again at each
// change of the pane. A wait has no limit of its own: what it waits for
// comes however slowly the machine runs, and a wait for what never comes
// fails with failure's words shortly before the test binary's -timeout
// would end it with no word of the pane.
func (w *paneWatch) until(t testing.TB, ok func() bool, failure func() string) {
	t.Helper()
	guard, stop := uitest.Guard(t)
	defer stop()
	for {
		changed := w.next()
		if ok() {
			return
		}
		select {
		case <-changed:
		case <-guard:
			t.Fatal(failure())
		}
	}
}

// counter counts events and is waited on by them, never by sleeping. The
// zero counter is at 0 and ready.
type counter struct {
	mu      sync.Mutex
	n       int64
	changed chan struct{} // closed at the next Add
}

// Add counts d more.
func (c *counter) Add(d int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += d
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// Load is the count so far.
func (c *counter) Load() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// waitAtLeast returns once the count is n or more, woken by each Add; it
// fails with failure's words shortly before the test binary's -timeout.
func (c *counter) waitAtLeast(t *testing.T, n int64, failure func() string) {
	t.Helper()
	guard, stop := uitest.Guard(t)
	defer stop()
	for {
		c.mu.Lock()
		if c.n >= n {
			c.mu.Unlock()
			return
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-guard:
			t.Fatal(failure())
		}
	}
}
