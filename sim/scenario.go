package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/internal/fdlimit"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Variant selects the correct design or a deliberately broken one.
type Variant string

// The variants.
const (
	Correct Variant = "correct"
	Broken  Variant = "broken"
)

// Other is the variant v is not: broken for correct, correct for broken.
func (v Variant) Other() Variant {
	if v == Broken {
		return Correct
	}
	return Broken
}

// ParseVariant accepts "correct" (also "") and "broken".
func ParseVariant(s string) (Variant, error) {
	switch Variant(s) {
	case "", Correct:
		return Correct, nil
	case Broken:
		return Broken, nil
	}
	return "", fmt.Errorf("unknown variant %q: use correct or broken", s)
}

// Copy limits of concurrent-copies (and the race screen).
const (
	MinCopies     = 2
	MaxCopies     = 100
	DefaultCopies = 10
)

// Setup is the world a variant of a scenario runs in: the event, the API
// instances, and the design of the engine, the schema and the client.
type Setup struct {
	Seats      int // seats of each event at the start
	Events     int // events; 0 means 1
	Instances  int // API instances; 0 means 1
	Design     engine.Design
	Constraint engine.Constraint
	Keys       KeyPlace
	// DatabaseIsolation is the database's default isolation level in this
	// world (StageConfig.DatabaseIsolation); zero: READ COMMITTED.
	DatabaseIsolation engine.IsolationLevel
	// Copies is how many copies of one request the scenario sends at the
	// same instant (0: it sends none).
	Copies int
	// HoldAfterLookup forces an interleaving: this many requests are held
	// at PointAfterLookup until each of them is there or has ended without
	// reaching it (0: none). No clock bounds the wait (see Barrier).
	HoldAfterLookup int
	// NewKeyPerTry, KeyInMemory, RetryClientErrors, RetryByStatus and
	// NeverRetry break the browser client.
	NewKeyPerTry      bool
	KeyInMemory       bool
	RetryClientErrors bool
	RetryByStatus     bool
	NeverRetry        bool
	// BackoffJitter and NoBackoff change the client's waits before a
	// retry: a random part added, or none at all.
	BackoffJitter bool
	NoBackoff     bool
	// KeyExpiry is how long a key lives in its booking row before the
	// sweeper removes it (StageConfig.KeyExpiry); 0: as long as the
	// booking.
	KeyExpiry time.Duration
	// LockWait bounds a wait for the event's row lock in this world
	// (ServeLimits.LockWait, the instances' statement_timeout); 0: no
	// bound. A scenario that sets it holds a request in a way that only
	// the bound, or the design's 409, can end.
	LockWait time.Duration
}

// Scenario is a named, self-contained run of the booking flow on a fresh
// schema with its own events and users, in the correct design and, where
// Broken is set, a broken one.
type Scenario struct {
	Name    string
	Title   string
	Summary string // what the correct design does, one line
	Broken  string // what the broken variant gets wrong, one line; "" when it has none
	// Copies says the scenario takes Options.Copies.
	Copies bool
	// world is the scenario's world (events, seats, instances, copies, the
	// interleaving it forces), without a design.
	world func(o Options) Setup
	// correct is the correct variant's design: the lesson's, but for the
	// scenario that shows another safe one; broken the broken variant's,
	// nil when there is none.
	correct Switches
	broken  *Switches
	run     func(ctx context.Context, r *Run) ([]client.Outcome, error)
}

// Instances is how many API instances the scenario's world has (a retry
// on another instance needs two).
func (s *Scenario) Instances() int { return max(s.world(Options{}).Instances, 1) }

// Design is the design variant v runs: the correct variant's, or the broken
// one's.
func (s *Scenario) Design(v Variant) Switches {
	if v == Broken && s.broken != nil {
		return *s.broken
	}
	return s.correct
}

// HasBroken reports whether the scenario has a broken variant.
func (s *Scenario) HasBroken() bool { return s.Broken != "" }

// Explain is the one-line explanation of variant v.
func (s *Scenario) Explain(v Variant) string {
	if v == Broken {
		return s.Broken
	}
	return s.Summary
}

// Scenarios lists every scenario in lesson order.
func Scenarios() []*Scenario { return append([]*Scenario(nil), scenarios...) }

// Lookup finds a scenario by name; the error lists the names.
func Lookup(name string) (*Scenario, error) {
	for _, s := range scenarios {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.Name
	}
	return nil, fmt.Errorf("unknown scenario %q; the scenarios are: %s", name, strings.Join(names, ", "))
}

// Options shape one run.
type Options struct {
	Variant Variant
	Copies  int           // concurrent-copies: MinCopies..MaxCopies; 0 means DefaultCopies
	Trace   trace.Options // stream and gate the trace for a viewer
	Clock   clock.Clock   // nil: a clock.Fake at the current second
	// Design, when set, runs the scenario's world under this design (the
	// design lab's) instead of Variant's.
	Design *Switches
}

// Run is one prepared run of a scenario: its stage is up and its events are
// in the table; nothing has been sent yet.
type Run struct {
	Scenario *Scenario
	Options  Options
	Setup    Setup
	Design   Switches // the design the run uses
	Stage    *Stage
	Trace    *trace.Trace
	EventIDs []int64
	seats    int // seats of every event at the start, summed
}

// Prepare builds the stage of a run: schema, tables, API instances, events.
// Close the run when done.
func (s *Scenario) Prepare(ctx context.Context, db Database, opts Options) (*Run, error) {
	if opts.Variant == "" {
		opts.Variant = Correct
	}
	if opts.Variant == Broken && !s.HasBroken() {
		return nil, fmt.Errorf("scenario %s has no broken variant", s.Name)
	}
	if opts.Copies == 0 {
		opts.Copies = DefaultCopies
	}
	if opts.Copies < MinCopies || opts.Copies > MaxCopies {
		return nil, fmt.Errorf("copies must be from %d to %d, got %d", MinCopies, MaxCopies, opts.Copies)
	}
	if opts.Clock == nil {
		opts.Clock = clock.NewFake(time.Now().Truncate(time.Second))
	}
	setup, design := s.plan(opts)
	// Each request in flight holds a file at each end of its HTTP
	// connection, besides the stage's database connections: a limit of
	// open files too low for them is said now, not met as a race that
	// hangs (the listener waits for a free file for ever).
	inFlight := 3
	if s.Copies {
		inFlight = opts.Copies
	}
	dbConns := s.Connections(opts)
	if err := fdlimit.Check(dbConns+2*inFlight+fdlimit.Overhead,
		fmt.Sprintf("for this run (%d database connections, and 2 for each of %d requests in flight)", dbConns, inFlight)); err != nil {
		if s.Copies {
			return nil, fmt.Errorf("%w; or race fewer copies", err)
		}
		return nil, err
	}
	tr := trace.New(opts.Clock, opts.Trace)
	st, err := NewStage(ctx, db, StageConfig{
		Limits:     api.ServeLimits{LockWait: setup.LockWait},
		Instances:  setup.Instances,
		MaxConns:   s.conns(opts),
		Clock:      opts.Clock,
		Trace:      tr,
		Design:     setup.Design,
		Constraint: setup.Constraint,
		Keys:       setup.Keys,

		DatabaseIsolation: setup.DatabaseIsolation,
		KeyExpiry:         setup.KeyExpiry,
	})
	if err != nil {
		if le, ok := errors.AsType[*ConnLimitError](err); ok && s.Copies {
			most := le.MaxConnections - le.Reserved - ConnSpare - 1 - 1 // the admin's and the pool's spare
			return nil, fmt.Errorf("%w; %d copies need %d: use at most %d copies", err, opts.Copies, le.Need, max(most, 0))
		}
		return nil, err
	}
	r := &Run{Scenario: s, Options: opts, Setup: setup, Design: design, Stage: st, Trace: tr}
	if setup.HoldAfterLookup > 0 {
		b := engine.NewBarrier(setup.HoldAfterLookup)
		for _, in := range st.Instances {
			// Under in-flight=answer-409 the key's lock lets one copy in
			// and answers the others at once: the one is held after its
			// lookup in the row (or its read of the event, behind a key
			// store) until every other has met it, whatever the store.
			if setup.Keys != KeysInRow && setup.Design.InFlight != engine.Answer409 {
				in.API.Barrier = b // the lookup is the key store's
				continue
			}
			in.API.Engine.Barrier, in.API.Engine.BarrierAt = b, engine.PointAfterLookup
		}
	}
	names := []string{"Workshop night", "Late show"}
	for i := range setup.Events {
		id, err := st.AddEvent(ctx, names[i%len(names)], setup.Seats, opts.Clock.Now().Add(30*24*time.Hour))
		if err != nil {
			_ = st.Close()
			return nil, err
		}
		r.EventIDs = append(r.EventIDs, id)
		r.seats += setup.Seats
	}
	return r, nil
}

// plan is the world of a run with opts (its defaults filled in) under its
// design, and the design.
func (s *Scenario) plan(opts Options) (Setup, Switches) {
	design := s.Design(opts.Variant)
	if opts.Design != nil {
		design = *opts.Design
	}
	setup := s.world(opts)
	design.apply(&setup)
	setup.Events = max(setup.Events, 1)
	setup.Instances = max(setup.Instances, 1)
	if setup.HoldAfterLookup > 0 && setup.Keys == KeysInRow && setup.Events == 1 && !setup.Design.NoRowLock && setup.Design.Lookup != engine.LookupBeforeLock &&
		setup.Design.InFlight != engine.Answer409 {
		// Copies of one event queue on its row lock before they reach the
		// pause point: holding the first there would hold them all. (A key
		// store is looked up before any lock: its copies are held there.)
		setup.HoldAfterLookup = 0
	}
	return setup, design
}

// Connections is how many PostgreSQL connections a run of s with opts holds
// at most while its stage is up: the admin pool's AdminConns and every API
// instance's pool (see conns). A server that many learners share (a
// workshop) budgets its connections with it before a run starts. Options
// are taken as Prepare takes them: an empty Variant is Correct, Copies 0 is
// DefaultCopies.
func (s *Scenario) Connections(opts Options) int {
	if opts.Variant == "" {
		opts.Variant = Correct
	}
	if opts.Copies == 0 {
		opts.Copies = DefaultCopies
	}
	setup, _ := s.plan(opts)
	return AdminConns + setup.Instances*s.conns(opts)
}

// conns is how many connections each API instance of a run holds: one per
// request that may be in flight at once (every copy of concurrent-copies,
// two for the scenarios that race two requests) and one for a retry that
// arrives while its first try still holds one.
func (s *Scenario) conns(opts Options) int {
	if s.Copies {
		return opts.Copies + 1
	}
	return 3
}

// EventID is the run's first event.
func (r *Run) EventID() int64 { return r.EventIDs[0] }

// Lanes are the participants of the run's sequence, left to right.
func (r *Run) Lanes() []trace.Lane { return r.Stage.Lanes() }

// Execute runs the scenario to its end, closes the trace, and reports what
// the browser saw, what the tables hold and which invariants held.
func (r *Run) Execute(ctx context.Context) (*Report, error) {
	outcomes, err := r.Scenario.run(ctx, r)
	r.Trace.Close()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.report(ctx, outcomes)
}

// Close removes the run's stage and schema.
func (r *Run) Close() error { return r.Stage.Close() }

// Rows reads the run's tables (committed rows).
func (r *Run) Rows(ctx context.Context) (engine.Rows, error) { return r.Stage.Rows(ctx) }

// browser is a client for the user of token with the variant's client
// design, whose tries meet the faults of plan.
//
// After a 409 request_in_progress its wait lasts until the request in
// flight with the key has ended, on every API instance: the run's clock
// is fake and its waits take no time, where in the world the second of
// Retry-After lets the first request end.
func (r *Run) browser(token string, plan func(trace.Attempt) client.Fault) *client.Client {
	c := r.Stage.Browser(token, plan)
	var last client.TryResult
	var key uuid.UUID
	c.Answered = func(in client.Intent, t client.TryResult) { last, key = t, in.Key }
	c.Meanwhile = func(ctx context.Context, _ trace.Attempt) error {
		if !inProgress(last.Status, last.Code) {
			return nil
		}
		user := api.DemoUsers()[token]
		for _, in := range r.Stage.Instances {
			if err := in.API.Engine.AwaitKey(ctx, user, key); err != nil {
				return err
			}
		}
		return nil
	}
	c.NewKeyPerTry = r.Setup.NewKeyPerTry
	c.KeyInMemory = r.Setup.KeyInMemory
	c.Jitter = r.Setup.BackoffJitter
	if r.Setup.NoBackoff {
		c.Backoff = make([]time.Duration, len(client.DefaultBackoff))
		c.IgnoreRetryAfter = true
	}
	switch {
	case r.Setup.RetryClientErrors:
		c.Retry = client.RetryClientErrors
	case r.Setup.NeverRetry:
		c.Retry = func(int, string, error) bool { return false }
	case r.Setup.RetryByStatus:
		c.Retry = client.RetryByStatus
	}
	return c
}

// note traces something the scenario makes happen in the world, as a note
// beside the lane it concerns (LaneBrowser for the user's side).
func (r *Run) note(ctx context.Context, lane, label, text string) error {
	return r.Trace.Emit(ctx, trace.Event{Kind: trace.KindNote, From: lane, To: lane, Label: label, Text: text})
}

// together books intents at the same instant, each from its own client and
// connection, and returns their outcomes in intent order.
func (r *Run) together(ctx context.Context, token []string, intents []client.Intent) []client.Outcome {
	clients := make([]*client.Client, len(intents))
	for i := range intents {
		clients[i] = r.browser(token[i%len(token)], nil)
	}
	return client.BookTogether(ctx, clients, intents)
}

// loseFirst loses the answer of try 1 of the given intents (all when none
// is given).
func loseFirst(intents ...int) func(trace.Attempt) client.Fault {
	return func(a trace.Attempt) client.Fault {
		if a.Try != 1 {
			return client.Deliver
		}
		if len(intents) == 0 {
			return client.LoseAnswer
		}
		for _, n := range intents {
			if a.Intent == n {
				return client.LoseAnswer
			}
		}
		return client.Deliver
	}
}

// crashAt makes the API instance die at point p on try 1 of intent n.
func crashAt(p engine.Point, n int) func(context.Context, engine.Point, engine.Request) error {
	return func(ctx context.Context, at engine.Point, _ engine.Request) error {
		a := trace.AttemptFrom(ctx)
		if at == p && a.Intent == n && a.Try == 1 {
			return engine.ErrCrash
		}
		return nil
	}
}
