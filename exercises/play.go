package exercises

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/check"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Playback is one check of an exercise run live on the learner's module
// and held at each step until [Playback.Release]: each try learn's
// client sends and each answer it gets, and each statement the learner's
// code sends, before PostgreSQL gets it (the harness's gate). Between
// steps, [Playback.Rows] reads the tables as they are committed. The run
// is learn check's, judged as a check's row is (one judge), run once.
type Playback struct {
	tr     *trace.Trace
	cancel context.CancelFunc
	// done is closed once the run has ended; row, stopped and err are
	// set before.
	done    chan struct{}
	row     check.Row
	stopped string
	err     error

	events chan trace.Event

	mu     sync.Mutex
	booked map[int64]bool // the events the run's tries book, as sent so far
	pool   *pgxpool.Pool  // on the run's schema, for Rows
	closed chan struct{}  // closed by Stop once everything is gone
	stuck  string         // why the run was ended: nothing moved (turns.onStuck)
	once   sync.Once
	undo   []func() // what Stop undoes, the last first
}

// Play runs the check named name (one of exercise e's Checks) on the
// module in dir, on srv, held at each step: it builds the module, creates
// its tables in a schema of its own and starts two API instances of it
// (at e's isolation level), then runs the check with learn's client, and
// returns at once. Stop ends it and removes everything it made.
func Play(ctx context.Context, dir string, srv *pgtemp.Server, e Exercise, name string) *Playback {
	ctx, cancel := context.WithCancel(ctx)
	p := &Playback{tr: trace.New(clock.Real{}, trace.Options{Stream: true, Gated: true}), cancel: cancel,
		done: make(chan struct{}), closed: make(chan struct{}), events: make(chan trace.Event), booked: map[int64]bool{}}
	go func() {
		// The run's events, passed on; the events its tries book are
		// those Rows shows.
		defer close(p.events)
		for ev := range p.tr.Events() {
			if ev.Kind == trace.KindSend && ev.EventID != 0 {
				p.mu.Lock()
				p.booked[ev.EventID] = true
				p.mu.Unlock()
			}
			select {
			case p.events <- ev:
			case <-ctx.Done():
			}
		}
	}()
	go func() {
		defer close(p.done)
		defer p.tr.Close()
		p.stopped, p.err = p.run(ctx, dir, srv, e, name)
		p.mu.Lock()
		if p.stuck != "" { // the run was ended for it
			p.stopped, p.err = p.stuck, nil
		}
		p.mu.Unlock()
	}()
	go func() {
		<-ctx.Done() // Stop, or the caller's end: nothing is left behind
		p.Stop()
	}()
	return p
}

// later keeps f for Stop.
func (p *Playback) later(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.undo = append(p.undo, f)
}

func (p *Playback) run(ctx context.Context, dir string, srv *pgtemp.Server, e Exercise, name string) (stopped string, err error) {
	bin, err := Build(ctx, dir)
	if be, ok := errors.AsType[*BuildError](err); ok {
		return be.Error(), nil
	}
	if err != nil {
		return "", err
	}
	schema, err := srv.NewSchema(ctx)
	if err != nil {
		return "", err
	}
	p.later(func() { dropSchema(context.Background(), schema) })
	if why, err := createTables(ctx, dir, schema.ConnString()); err != nil || why != "" {
		return why, err
	}
	cfg, err := pgxpool.ParseConfig(schema.ConnString())
	if err != nil {
		return "", err
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	p.pool = pool
	p.mu.Unlock()
	p.later(pool.Close)

	t := newTurns(pool)
	t.onStuck = func(why string) {
		p.mu.Lock()
		p.stuck = why
		p.mu.Unlock()
		p.cancel()
	}
	go t.run(ctx, func(s Statement) { _ = p.tr.Emit(ctx, statementStep(s)) })
	gate := func(kind string, s Statement, let func()) {
		if kind == "learn-sql" {
			if _, ok := api.ParseRequestID(s.Request); ok {
				_ = p.tr.Emit(ctx, statementDone(s))
			}
			return
		}
		t.on(kind, s, let)
	}
	var urls []string
	var insts []*Instance
	for i := range 2 {
		inst, err := start(ctx, bin, trace.LaneAPI(i+1), schema.ConnString(), startOptions{isolation: e.Isolation, gate: gate})
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if err != nil {
			if strings.Contains(err.Error(), "flag provided but not defined: -gate") {
				return "this module's harness is older than this learn, and cannot be played: run learn exercises init --restore (your files are kept)", nil
			}
			return err.Error(), nil
		}
		p.later(inst.Stop)
		urls = append(urls, inst.URL)
		insts = append(insts, inst)
	}
	ccfg, err := Config(urls)
	if err != nil {
		return "", err
	}
	co := check.Options{Only: []string{name}, Harness: true, Trace: p.tr, Timeout: time.Hour,
		Done: func(r check.Row) { p.row = r }}
	if e.OneTry {
		co.Backoff = []time.Duration{}
	}
	if _, err := check.Run(ctx, ccfg, co); err != nil {
		return "", err
	}
	// An instance that ended during the play is said with its row, as
	// learn exercises check says it: how it ended and what it wrote.
	// An instance that died a moment ago is waited for, to say it.
	for i, inst := range insts {
		wait := time.Duration(0)
		if p.row.State == check.Error { // a row that could not run: an instance gone?
			wait = ioWait + 500*time.Millisecond
		}
		if ended := inst.endedWithin(wait); ended != "" {
			said := fmt.Sprintf("api-%d ended during the play (%s)", i+1, ended)
			if tail := strings.TrimSpace(inst.Stderr()); tail != "" {
				said += ", and wrote: " + cutLine(tail)
			}
			p.row.Says = said + "; then: " + p.row.Says
		}
	}
	return "", nil
}

// statementStep is the step of a statement the learner's code is about to
// send, as the harness's gate told it.
func statementStep(s Statement) trace.Event {
	at, _ := api.ParseRequestID(s.Request)
	sql := strings.Join(strings.Fields(s.SQL), " ")
	word, _, _ := strings.Cut(sql, " ")
	text := "#" + s.Request + " sends " + sql
	if len(s.Args) > 0 {
		text += "  [" + strings.Join(s.Args, ", ") + "]"
	}
	return trace.Event{Kind: trace.KindStatement, From: s.Instance, To: trace.LanePostgres, Intent: at.Intent, Copy: at.Copy, Try: at.Try,
		Label: strings.ToUpper(word), Text: text, SQL: s.SQL}
}

// statementDone is what a statement of the learner's code got back, as
// the harness reported it: a side event (KindSQL) of its try.
func statementDone(s Statement) trace.Event {
	at, _ := api.ParseRequestID(s.Request)
	said := s.Result
	switch {
	case s.Crash:
		said = "never sent: learn's crash dropped the connection before it"
	case s.Error != "":
		said = s.Error
	}
	return trace.Event{Kind: trace.KindSQL, From: s.Instance, To: trace.LanePostgres, Intent: at.Intent, Copy: at.Copy, Try: at.Try,
		SQL: s.SQL, Text: said}
}

// Events are the run's steps and side events, as they happen; the channel
// is closed when the run has ended.
func (p *Playback) Events() <-chan trace.Event { return p.events }

// Release lets the step on screen go on; it fails once the run has ended.
func (p *Playback) Release(ctx context.Context) error {
	select {
	case <-p.done:
		return errors.New("the run has ended")
	default:
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return p.tr.Release(ctx)
}

// Rows reads both tables as they are committed now: the events the run's
// tries have named so far, and their bookings.
func (p *Playback) Rows(ctx context.Context) (engine.Rows, error) {
	p.mu.Lock()
	pool := p.pool
	p.mu.Unlock()
	select {
	case <-p.closed:
		return engine.Rows{}, errors.New("the run has been stopped")
	default:
	}
	if pool == nil {
		return engine.Rows{}, errors.New("the tables are not made yet")
	}
	rows, err := engine.ReadRows(ctx, pool)
	if err != nil {
		return rows, fmt.Errorf("could not read the tables: %w", err)
	}
	// Only the run's events and their bookings: not those of the check's
	// own setup.
	p.mu.Lock()
	defer p.mu.Unlock()
	rows.Events = slices.DeleteFunc(rows.Events, func(e engine.EventRow) bool { return !p.booked[e.ID] })
	rows.Bookings = slices.DeleteFunc(rows.Bookings, func(b engine.BookingRow) bool { return !p.booked[b.EventID] })
	return rows, nil
}

// Done is closed once the run has ended.
func (p *Playback) Done() <-chan struct{} { return p.done }

// Result is the run's check row; stopped says why no check ran (the
// module did not build, its tables or an instance did not start), and err
// is a run that could not be made. Call it after Done.
func (p *Playback) Result() (row check.Row, stopped string, err error) {
	<-p.done
	return p.row, p.stopped, p.err
}

// Stop ends the run and removes what it made: the instances, the pool,
// the schema. It returns once they are gone; safe to call twice.
func (p *Playback) Stop() {
	p.once.Do(func() {
		p.cancel()
		<-p.done
		p.mu.Lock()
		undo := p.undo
		p.undo = nil
		p.mu.Unlock()
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		close(p.closed)
	})
	<-p.closed
}
