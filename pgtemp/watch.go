package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/learn-idempotency/learn/internal/tailbuf"
)

// learn watches the server it started. A local cluster's postmaster that
// exits without Close (kill -9, the OOM killer, a full disk that made
// PostgreSQL give up its recovery) is noticed at once: Health says so, with
// how it ended and the last lines of its log, and learn starts it again on
// the same data directory, where everything committed is kept (the
// cluster runs with synchronous_commit on, so a booking that was answered
// is in its WAL, which the kernel holds even without fsync). A server that
// does not start again, or exits more than maxRestarts times within
// restartWindow, is Gone. A Docker container that stops is Gone at once
// (docker_container.go). Callers follow Health (HealthChanged) to say what
// happened and to stop when it is Gone. A server learn did not start (URL
// mode) is always Up: learn has no process of it to watch.

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

// Health says where the server stands now. Take HealthChanged first, then
// Health, to miss no change.
func (s *Server) Health() Health {
	if hs := s.healthState(); hs != nil {
		h, _ := hs.get()
		return h
	}
	return Health{State: Up}
}

// HealthChanged is closed at the next change of Health; nil (never ready)
// for a server learn does not watch.
func (s *Server) HealthChanged() <-chan struct{} {
	if hs := s.healthState(); hs != nil {
		_, ch := hs.get()
		return ch
	}
	return nil
}

func (s *Server) healthState() *healthState {
	switch {
	case s.local != nil:
		return &s.local.health
	case s.docker != nil:
		return &s.docker.health
	}
	return nil
}

// healthState holds a Health and wakes whoever waits for its next change.
type healthState struct {
	mu      sync.Mutex
	h       Health
	changed chan struct{}
}

func (hs *healthState) get() (Health, <-chan struct{}) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.changed == nil {
		hs.changed = make(chan struct{})
	}
	return hs.h, hs.changed
}

func (hs *healthState) set(update func(h *Health)) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	update(&hs.h)
	if hs.changed != nil {
		close(hs.changed)
	}
	hs.changed = make(chan struct{})
}

// The restart policy: a server that exits more often than this is not
// started again.
const (
	maxRestarts   = 3
	restartWindow = time.Minute
	// orphanWait bounds how long a restart waits for the backends of a
	// postmaster that was killed to end (they end as soon as they notice
	// it is gone; learn then kills those that linger).
	orphanWait = 2 * time.Second
)

// watch follows the cluster's postmaster from the end of its start until
// Close (ctx): when it exits, it records why and starts it again with
// opts (whose Logf and OnDownload are never called: they belong to Start).
func (c *cluster) watch(ctx context.Context, opts Options) {
	defer close(c.watchDone)
	opts.Logf, opts.OnDownload = nil, nil
	var exits []time.Time
	for {
		pm := c.pm
		select {
		case <-pm.done:
		case <-ctx.Done():
			return
		}
		if ctx.Err() != nil {
			return // Close stopped it
		}
		pm.drained(logDrain)
		now := time.Now()
		exit, log := describeExit(pm), serverLog(c.logs)
		exits = append(exits, now)
		for len(exits) > 0 && now.Sub(exits[0]) > restartWindow {
			exits = exits[1:]
		}
		if len(exits) > maxRestarts {
			c.health.set(func(h *Health) {
				*h = Health{State: Gone, PID: pm.pid(), Exit: exit, Log: log, Restarts: h.Restarts, Since: now,
					Err: fmt.Errorf("it exited %d times within %s", len(exits), restartWindow)}
			})
			return
		}
		c.health.set(func(h *Health) {
			*h = Health{State: Restarting, PID: pm.pid(), Exit: exit, Log: log, Restarts: h.Restarts, Since: now}
		})
		err := c.restart(ctx, &opts, pm)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.health.set(func(h *Health) {
				*h = Health{State: Gone, PID: pm.pid(), Exit: exit, Log: serverLog(c.logs), Err: err, Restarts: h.Restarts, Since: time.Now()}
			})
			return
		}
		c.health.set(func(h *Health) {
			*h = Health{State: Up, PID: c.pm.pid(), Exit: exit, Log: log, Restarts: h.Restarts + 1, Since: time.Now()}
		})
	}
}

// restart starts the postmaster again on the cluster's data, once the
// processes of old (which exited) are gone: its backends end when they
// notice it is gone, and those that linger are killed; then its shared
// memory is released and a new postmaster recovers from the WAL.
func (c *cluster) restart(ctx context.Context, opts *Options, old *proc) error {
	if left := processesIn(c.data(), c.run.uid); len(left) > 0 {
		if !waitUntil(orphanWait, func() bool { return len(processesIn(c.data(), c.run.uid)) == 0 }) {
			for _, pid := range processesIn(c.data(), c.run.uid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			waitEnded(left, time.Second)
		}
	}
	releaseSharedMemory(c.data(), c.run.uid, old.pid())
	var err error
	for try := 0; try < 3; try++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		last := c.pm
		err = inDir(filepath.Dir(c.dir), c.start(ctx, opts), c.logs.Lines(40))
		if err != nil && c.pm != last && !c.pm.exited() {
			c.pm.quit(quitWait)
		}
		// Where learn cannot see the old backends (no /proc), PostgreSQL
		// refuses to start while one of them still holds the shared
		// memory: once they have noticed, it starts.
		if err == nil || !strings.Contains(c.logs.Lines(10), "is still in use") {
			return err
		}
		t := time.NewTimer(orphanWait / 4)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	return err
}

// probeRefusals are what PostgreSQL logs each time learn's probe of a
// server that is not ready yet is refused (start, recovery, shutdown):
// the end of a log to show people leaves them out.
var probeRefusals = []string{
	"the database system is not yet accepting connections",
	"Consistent recovery state has not been yet reached",
	"the database system is starting up",
	"the database system is in recovery mode",
	"the database system is shutting down",
}

// serverLog is the end of a server's log for people: its last 20 lines
// without the refusals of learn's own probes.
func serverLog(logs *tailbuf.Buffer) string {
	var keep []string
	for l := range strings.SplitSeq(logs.Lines(200), "\n") {
		if !slices.ContainsFunc(probeRefusals, func(r string) bool { return strings.Contains(l, r) }) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep[max(0, len(keep)-20):], "\n")
}

// describeExit says how a postmaster ended, for people.
func describeExit(p *proc) string {
	how := "exited"
	if ps := p.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = fmt.Sprintf("was killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		} else {
			how = fmt.Sprintf("exited with status %d", ps.ExitCode())
		}
	} else if err := p.err; err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		how = fmt.Sprintf("exited (%v)", err)
	}
	return fmt.Sprintf("learn's PostgreSQL (pid %d) %s", p.pid(), how)
}
