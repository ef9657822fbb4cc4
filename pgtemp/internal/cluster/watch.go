package cluster

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/learn-idempotency/learn/internal/tailbuf"
	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/proc"
	"github.com/learn-idempotency/learn/pgtemp/internal/shm"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// learn watches the cluster it started. A local cluster's postmaster that
// exits without Close (kill -9, the OOM killer, a full disk that made
// PostgreSQL give up its recovery) is noticed at once: Health says so, with
// how it ended and the last lines of its log, and learn starts it again on
// the same data directory, where everything committed is kept (the
// cluster runs with synchronous_commit on, so a booking that was answered
// is in its WAL, which the kernel holds even without fsync). A server that
// does not start again, or exits more than MaxRestarts times within
// restartWindow, is Gone. Callers follow the Instance's Health (a
// way.Watch) to say what happened and to stop when it is Gone.

// The restart policy: a server that exits more than MaxRestarts times
// within restartWindow is not started again.
const (
	MaxRestarts   = 3
	restartWindow = time.Minute
	// orphanWait bounds how long a restart waits for the backends of a
	// postmaster that was killed to end (they end as soon as they notice
	// it is gone; learn then kills those that linger).
	orphanWait = 2 * time.Second
)

// watch follows the cluster's postmaster from the end of its start until
// Close (ctx): when it exits, it records why and starts it again with
// opts (whose Logf and OnDownload are never called: they belong to Start).
func (c *Cluster) watch(ctx context.Context, env way.Env) {
	defer close(c.watchDone)
	var exits []time.Time
	for {
		pm := c.pm
		select {
		case <-pm.Done:
		case <-ctx.Done():
			return
		}
		if ctx.Err() != nil {
			return // Close stopped it
		}
		pm.Drained(proc.LogDrain)
		now := time.Now()
		exit, log := describeExit(pm), serverLog(c.logs)
		exits = append(exits, now)
		for len(exits) > 0 && now.Sub(exits[0]) > restartWindow {
			exits = exits[1:]
		}
		if len(exits) > MaxRestarts {
			c.health.Set(func(h *way.Health) {
				*h = way.Health{State: way.Gone, PID: pm.PID(), Exit: exit, Log: log, Restarts: h.Restarts, Since: now,
					Err: fmt.Errorf("it exited %d times within %s", len(exits), restartWindow)}
			})
			return
		}
		c.health.Set(func(h *way.Health) {
			*h = way.Health{State: way.Restarting, PID: pm.PID(), Exit: exit, Log: log, Restarts: h.Restarts, Since: now}
		})
		err := c.restart(ctx, &env, pm)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.health.Set(func(h *way.Health) {
				*h = way.Health{State: way.Gone, PID: pm.PID(), Exit: exit, Log: serverLog(c.logs), Err: err, Restarts: h.Restarts, Since: time.Now()}
			})
			return
		}
		c.health.Set(func(h *way.Health) {
			*h = way.Health{State: way.Up, PID: c.pm.PID(), Exit: exit, Log: log, Restarts: h.Restarts + 1, Since: time.Now()}
		})
	}
}

// restart starts the postmaster again on the cluster's data, once the
// processes of old (which exited) are gone: its backends end when they
// notice it is gone, and those that linger are killed; then its shared
// memory is released and a new postmaster recovers from the WAL.
func (c *Cluster) restart(ctx context.Context, env *way.Env, old *proc.Proc) error {
	if left := proc.ProcessesIn(c.data(), c.run.UID); len(left) > 0 {
		if !proc.WaitUntil(orphanWait, func() bool { return len(proc.ProcessesIn(c.data(), c.run.UID)) == 0 }) {
			for _, pid := range proc.ProcessesIn(c.data(), c.run.UID) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			proc.WaitEnded(left, time.Second)
		}
	}
	shm.Release(c.data(), c.run.UID, old.PID())
	var err error
	for try := 0; try < 3; try++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		last := c.pm
		err = clusterdir.InDir(filepath.Dir(c.dir), c.start(ctx, env), c.logs.Lines(40))
		if err != nil && c.pm != last && !c.pm.Exited() {
			c.pm.Quit(quitWait)
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
func describeExit(p *proc.Proc) string {
	how := "exited"
	if ps := p.Cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = fmt.Sprintf("was killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		} else {
			how = fmt.Sprintf("exited with status %d", ps.ExitCode())
		}
	} else if err := p.Err; err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		how = fmt.Sprintf("exited (%v)", err)
	}
	return fmt.Sprintf("learn's PostgreSQL (pid %d) %s", p.PID(), how)
}
