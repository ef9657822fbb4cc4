// Package live owns the live runs of one learner: every run of a scenario
// on the real PostgreSQL, from waiting for the database and preparing the
// tables to dropping them again. Screens start runs here and read them; they
// never build or tear down a stage themselves, so no copy of that lifecycle
// can leak one.
//
// A Run's whole life is one goroutine: it waits for the database, prepares
// the stage (schema, tables, API instances, pools), executes the scenario,
// and removes the stage as soon as the scenario has ended or the run is
// stopped. Everything a caller may block on (Prepared, Events, Done,
// Stopped, Release) is released when that goroutine ends, so a command
// waiting on a run can never leak.
//
// The PostgreSQL under the runs (Postgres, postgres.go) is watched
// (health.go): a run waits while learn starts it again after it exited,
// says what happened when it went under the run, and its stage's API
// answers database_down meanwhile (Database).
package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/learn-idempotency/learn/internal/pgwait"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// ID identifies a run, unique within the process: a screen that started
// run 7 knows that a message about run 6 is stale, whichever screen
// started run 6.
type ID uint64

var lastID atomic.Uint64

// Runs owns the live runs of one learner (the terminal app, or one SSH
// session of a workshop): they run under its context, on its database, and
// Close stops them all. Its methods are safe for concurrent use.
type Runs struct {
	ctx    context.Context
	cancel context.CancelFunc
	db     *Postgres

	mu     sync.Mutex
	closed bool
	active map[ID]*Run
	wg     sync.WaitGroup
}

// NewRuns returns the owner of the runs made on db, all of which end when
// ctx ends or Close is called.
func NewRuns(ctx context.Context, db *Postgres) *Runs {
	ctx, cancel := context.WithCancel(ctx)
	return &Runs{ctx: ctx, cancel: cancel, db: db, active: map[ID]*Run{}}
}

// DB is the database the runs are made on.
func (rs *Runs) DB() *Postgres { return rs.db }

// Active is the number of runs whose stage may still exist: started and
// not yet removed.
func (rs *Runs) Active() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.active)
}

// Close stops every run and waits until each has removed its stage. Runs
// started after Close fail at once. Safe to call twice.
func (rs *Runs) Close() {
	rs.mu.Lock()
	rs.closed = true
	rs.mu.Unlock()
	rs.cancel()
	rs.wg.Wait()
}

// Start starts a run of scenario s with opts and returns at once; the run
// waits for the database, prepares its stage and executes in the
// background. Stop it (at any time) when it is no longer wanted.
func (rs *Runs) Start(s *sim.Scenario, opts sim.Options) *Run {
	ctx, cancel := context.WithCancel(rs.ctx)
	r := &Run{id: ID(lastID.Add(1)), Scenario: s, Options: opts, ctx: ctx, cancel: cancel,
		prepared: make(chan struct{}), done: make(chan struct{}), stopped: make(chan struct{})}
	rs.mu.Lock()
	if rs.closed {
		rs.mu.Unlock()
		r.fail(errStopped)
		close(r.stopped)
		cancel()
		return r
	}
	rs.active[r.id] = r
	rs.wg.Add(1)
	rs.mu.Unlock()
	go func() {
		defer rs.wg.Done()
		defer func() {
			rs.mu.Lock()
			delete(rs.active, r.id)
			rs.mu.Unlock()
			close(r.stopped)
		}()
		r.live(rs)
	}()
	return r
}

// Run is one live run of a scenario. Read it through its channels: Prepared
// (the stage is up, or the run failed first), Events (the trace, when
// streamed), Done (the scenario has ended, or failed) and Stopped
// (everything the run made is removed).
type Run struct {
	id       ID
	Scenario *sim.Scenario
	Options  sim.Options

	ctx    context.Context
	cancel context.CancelFunc

	prepared, done, stopped chan struct{}
	doneOnce                sync.Once

	// Set before prepared is closed, then read-only.
	run *sim.Run
	// Set before done is closed, then read-only.
	report *sim.Report
	err    error

	waiting atomic.Pointer[string] // why the run waits for connections; nil or "": it does not
}

// ID is the run's process-wide identity.
func (r *Run) ID() ID { return r.id }

// live is the run's whole life, on its own goroutine.
func (r *Run) live(rs *Runs) {
	defer r.cancel()
	d, err := rs.db.waitUp(r.ctx, r.setWaiting)
	if err != nil {
		r.fail(r.why(err))
		return
	}
	if b := rs.db.Budget(); b != nil {
		release, err := b.take(r.ctx, rs, r.Scenario.Connections(r.Options), r.setWaiting)
		if err != nil {
			r.fail(r.why(err))
			return
		}
		defer release() // after the stage is removed (deferred below)
	}
	// A statement of the preparation held up by another session (a lock
	// on a catalog) is said as the run's wait, with who holds it.
	pctx := pgwait.WithTrace(r.ctx, r.setWaiting)
	run, err := r.Scenario.Prepare(pctx, d, r.Options)
	if err != nil {
		err = rs.db.explain(r.ctx, err)
		if down, ok := errors.AsType[*downError](err); ok && down.h.State == pgtemp.Restarting {
			// The server went as the run prepared (the play screen's r
			// right after a crash): once learn has started it again, the
			// run prepares anew.
			if d, err = rs.db.waitUp(r.ctx, r.setWaiting); err == nil {
				if run, err = r.Scenario.Prepare(pctx, d, r.Options); err != nil {
					err = rs.db.explain(r.ctx, err)
				}
			}
		}
	}
	if err != nil {
		r.fail(r.why(err))
		return
	}
	r.run = run
	close(r.prepared)
	defer func() {
		run.Trace.Close() // also when Execute never ran: Events must end
		_ = run.Close()
	}()
	rep, err := run.Execute(r.ctx)
	if err != nil {
		err = r.why(rs.db.explain(r.ctx, err))
	}
	r.finish(rep, err)
}

// why is err as the run reports it: a stopped run says so.
func (r *Run) why(err error) error {
	if r.ctx.Err() != nil {
		return errStopped
	}
	return err
}

// fail ends a run that never got its stage.
func (r *Run) fail(err error) {
	r.finish(nil, err)
	close(r.prepared)
}

func (r *Run) finish(rep *sim.Report, err error) {
	r.doneOnce.Do(func() {
		r.report, r.err = rep, err
		close(r.done)
	})
}

// Stop asks the run to stop and returns at once: a step held for a viewer,
// a request in flight and a start still waiting for the database are all
// abandoned, and the stage is removed in the background (Stopped says when).
// Safe to call at any time, on a run that never got its stage too, and any
// number of times.
func (r *Run) Stop() { r.cancel() }

// Waiting says why the run waits, in a sentence for the screen; "" when
// it does not: for PostgreSQL connections that the runs of other learners
// (or its own learner's other runs) hold (only a database with a Budget
// makes runs wait so), for learn to start its PostgreSQL again after it
// exited, or for a lock that another session holds (pgwait), naming it.
func (r *Run) Waiting() string {
	if s := r.waiting.Load(); s != nil {
		return *s
	}
	return ""
}

func (r *Run) setWaiting(why string) { r.waiting.Store(&why) }

// Prepared is closed once the stage is up (Lanes and Setup may be read) or
// the run failed before that (Err says why).
func (r *Run) Prepared() <-chan struct{} { return r.prepared }

// Done is closed once the scenario has ended or failed: Result may be read.
func (r *Run) Done() <-chan struct{} { return r.done }

// Stopped is closed once everything the run made is removed.
func (r *Run) Stopped() <-chan struct{} { return r.stopped }

// Result is the run's report, or why there is none; valid once Done is
// closed.
func (r *Run) Result() (*sim.Report, error) {
	select {
	case <-r.done:
		return r.report, r.err
	default:
		return nil, errors.New("the run has not ended yet")
	}
}

// Err is why the run could not be prepared; valid once Prepared is closed.
func (r *Run) Err() error {
	select {
	case <-r.prepared:
	default:
		return nil
	}
	if r.run == nil {
		return r.err
	}
	return nil
}

// Lanes are the participants of the run's sequence, left to right; nil
// until the run is prepared.
func (r *Run) Lanes() []trace.Lane {
	if r.prepStage() == nil {
		return nil
	}
	return r.run.Lanes()
}

// Setup is the world of the run (seats, events, instances, design).
func (r *Run) Setup() sim.Setup {
	if r.prepStage() == nil {
		return sim.Setup{}
	}
	return r.run.Setup
}

// Trace is the run's trace (every event so far), nil until it is prepared.
func (r *Run) Trace() *trace.Trace {
	if r.prepStage() == nil {
		return nil
	}
	return r.run.Trace
}

// prepStage is the prepared run, or nil before that or after a failure.
func (r *Run) prepStage() *sim.Run {
	select {
	case <-r.prepared:
		return r.run
	default:
		return nil
	}
}

// closedEvents is the stream of a run that has none.
var closedEvents = func() chan trace.Event { ch := make(chan trace.Event); close(ch); return ch }()

// Events is the run's stream of trace events when Options.Trace.Stream is
// set; it is closed when the scenario ends, fails or is stopped, and is
// closed at once for a run that failed before it was prepared or does not
// stream. Wait for Prepared before reading it.
func (r *Run) Events() <-chan trace.Event {
	run := r.prepStage()
	if run == nil || run.Trace.Events() == nil {
		return closedEvents
	}
	return run.Trace.Events()
}

// Release lets the step that is held for the viewer go on (a gated trace).
// It returns once that step has gone on, or with an error once the run has
// ended or was stopped.
func (r *Run) Release() error {
	run := r.prepStage()
	if run == nil {
		return fmt.Errorf("run %d has no stage: %w", r.id, errStopped)
	}
	return run.Trace.Release(r.ctx)
}

// Rows reads the run's tables (committed rows) as they are now; it fails
// once the run has ended and its stage is removed.
func (r *Run) Rows(ctx context.Context) (engine.Rows, error) {
	run := r.prepStage()
	if run == nil {
		return engine.Rows{}, errStopped
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.ctx, cancel)
	defer stop()
	return run.Rows(ctx)
}
