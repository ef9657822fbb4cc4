package way

import (
	"fmt"
	"sync"
	"time"
)

// State says where a server stands after Start.
type State int

const (
	// Up: the server runs: as started, or started again after it exited.
	Up State = iota
	// Restarting: the server's process exited without Close; learn is
	// starting it again on the same data.
	Restarting
	// Gone: the server exited and learn could not, or will not, start it
	// again. Nothing can be stored in it until learn is started again.
	Gone
)

func (s State) String() string {
	switch s {
	case Up:
		return "up"
	case Restarting:
		return "restarting"
	case Gone:
		return "gone"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Health is what learn knows of the server it started.
type Health struct {
	State State
	// PID is the process id of the server's postmaster, the one that runs
	// (Up) or the last one (Restarting, Gone); 0 when learn has no
	// process of it (Docker).
	PID int
	// Exit says how the server's process ended the last time it ended
	// without Close, e.g. "PostgreSQL (pid 4197) was killed by signal 9
	// (killed)"; "" when it never did.
	Exit string
	// Log is the end of the server's log when it ended (at most 20 lines,
	// without the refusals of learn's own probes while it started).
	Log string
	// Err is why learn did not start it again, once it is Gone.
	Err error
	// Restarts is how many times learn started it again.
	Restarts int
	// Since is when the server entered State.
	Since time.Time
}

// Summary is one line for people: "up", or what happened and what learn
// does about it, without the log.
func (h Health) Summary() string {
	switch h.State {
	case Restarting:
		return h.Exit + "; learn is starting it again on the same data"
	case Gone:
		if h.Err != nil {
			return fmt.Sprintf("%s, and learn could not start it again: %v", h.Exit, h.Err)
		}
		return h.Exit
	}
	if h.Restarts > 0 {
		return fmt.Sprintf("up again (started again %d time%s after it exited; last: %s)", h.Restarts, plural(h.Restarts), h.Exit)
	}
	return "up"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Watch holds a Health and wakes whoever waits for its next change. The
// zero value is ready to use (Up, since the zero time).
type Watch struct {
	mu      sync.Mutex
	h       Health
	changed chan struct{}
}

// Get returns the Health now and a channel closed at its next change.
func (w *Watch) Get() (Health, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed == nil {
		w.changed = make(chan struct{})
	}
	return w.h, w.changed
}

// Set changes the Health through update and wakes every waiter.
func (w *Watch) Set(update func(h *Health)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	update(&w.h)
	if w.changed != nil {
		close(w.changed)
	}
	w.changed = make(chan struct{})
}
