package exercises

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/sim/api"
)

// turns lets the held statements of a played run go one at a time, in
// turns: it waits until every request in flight is held at the
// harness's gate, waits for a lock in PostgreSQL or for a connection of
// its pool, and then lets go the held statement whose request has waited
// longest since its last turn. A request that waits on anything else
// (the learner's own mutex, a sleep) for longer than stall lets the turn
// go on without it: a play never stops for good.
// The copies of a race so go in lockstep, statement by statement, and
// the race shows at its worst, in one run, every time: both lookups
// before either insert, where nothing orders them.
type turns struct {
	db *pgxpool.Pool // to see which backends wait for a lock

	mu      sync.Mutex
	flights map[string]*flight // the requests in flight, by instance and number
	arrived int
	turn    int
	changed chan struct{} // closed and replaced at every change
	// onStuck, when set, is told once why the run cannot go on: requests
	// are in flight, none is held, and nothing has moved for stuckAfter.
	onStuck func(why string)
}

// flight is one request in flight.
type flight struct {
	request string     // its X-Request-Id
	held    *Statement // its statement held at the gate, if one is
	pooled  bool       // it waits for a connection of the instance's pool
	let     func()     // lets held go
	pid     uint32     // its database connection, once it has sent a statement
	arrived int        // its order of arrival
	last    int        // the turn it last went, 0 before its first
}

func newTurns(db *pgxpool.Pool) *turns {
	return &turns{db: db, flights: map[string]*flight{}, changed: make(chan struct{})}
}

// on takes a line of an instance's gate (see startOptions.gate). A
// request that is not one of learn's tries (the check's own reads) is
// never held.
func (t *turns) on(kind string, s Statement, let func()) {
	if _, ok := api.ParseRequestID(s.Request); !ok {
		if kind == "learn-wait" {
			let()
		}
		return
	}
	key := fmt.Sprintf("%s/%d", s.Instance, s.N)
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.flights[key]
	switch kind {
	case "learn-acquire", "learn-acquired":
		if f != nil {
			f.pooled = kind == "learn-acquire"
		}
	case "learn-begin", "learn-wait":
		if f == nil {
			t.arrived++
			f = &flight{arrived: t.arrived, request: s.Request}
			t.flights[key] = f
		}
		if kind == "learn-wait" {
			f.held, f.let, f.pid = &s, let, s.PID
		}
	case "learn-end":
		delete(t.flights, key)
	default:
		return
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// poll is how often a request that is neither held nor known to wait for
// a lock is looked at again: a statement under way, for a moment.
const poll = 10 * time.Millisecond

// stall is how long the turns wait, with nothing changing, for requests
// that are neither held nor waiting for a lock or a connection.
const stall = 750 * time.Millisecond

// run lets statements go until ctx ends: each, when its turn comes, is
// shown (step, which returns once the learner lets it go on) and then let
// go.
func (t *turns) run(ctx context.Context, step func(Statement)) {
	var seen chan struct{} // the change last seen, and since when
	var since time.Time
	told := false // onStuck was told of this stillness
	for {
		f, changed, running := t.next()
		if changed != seen {
			seen, since, told = changed, time.Now(), false
		}
		if f == nil && len(running) > 0 && t.allWait(ctx, running) {
			f = t.pick(changed)
		}
		if f == nil && time.Since(since) >= stall {
			f = t.pick(changed) // nothing moved: the held go on without the rest
		}
		if f == nil && !told && t.onStuck != nil && time.Since(since) >= stuckAfter.get() {
			if why := t.stuck(); why != "" {
				told = true
				t.onStuck(why)
			}
		}
		if f == nil {
			timer := time.NewTimer(poll)
			select {
			case <-changed:
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return
			}
			timer.Stop()
			continue
		}
		step(*f.held)
		t.mu.Lock()
		let := f.let
		f.held, f.let = nil, nil
		t.turn++
		f.last = t.turn
		t.mu.Unlock()
		let()
		if ctx.Err() != nil {
			return
		}
	}
}

// next is the held statement whose turn it is, when every request in
// flight is held; else the backends of those that run (nil: one has sent
// no statement yet, so none can go before it does) and the channel closed
// at the next change.
func (t *turns) next() (f *flight, changed chan struct{}, running []uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed = t.changed
	for _, g := range t.flights {
		if g.held != nil || g.pooled {
			continue // held, or held up until a held one gives its connection back
		}
		if g.pid == 0 {
			return nil, changed, nil
		}
		running = append(running, g.pid)
	}
	if len(running) > 0 {
		return nil, changed, running
	}
	return t.pickLocked(), changed, nil
}

// allWait reports whether every backend of pids waits for a lock.
func (t *turns) allWait(ctx context.Context, pids []uint32) bool {
	ids := make([]int64, len(pids))
	for i, p := range pids {
		ids[i] = int64(p)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var waiting int
	err := t.db.QueryRow(ctx, `SELECT count(DISTINCT pid) FROM pg_locks WHERE NOT granted AND pid = ANY($1)`, ids).Scan(&waiting)
	return err == nil && waiting == len(ids)
}

// stuckAfter is how long requests in flight, none of them held, may go
// without a change before the play is said to be stuck (10 s; a test
// makes it shorter).
var stuckAfter = durationVar(10 * time.Second)

// stuck says why the run cannot go on when requests are in flight and
// none is held: "" when one is held (the learner's turn) or none flies.
func (t *turns) stuck() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var first *flight
	for _, f := range t.flights {
		if f.held != nil {
			return ""
		}
		if first == nil || f.arrived < first.arrived {
			first = f
		}
	}
	if first == nil {
		return ""
	}
	what := "waits in your code on something that is not a statement (a sleep, a lock of your own)"
	switch {
	case first.pooled:
		what = "waits for a connection of the pool, and every one is in use (a transaction left open?)"
	case first.pid != 0:
		what = "has not come back from its last statement (one that does not end, or a lock nothing lets go) or from your code after it"
	}
	return fmt.Sprintf("the play stopped: nothing moved for %s, and request #%s %s; learn exercises check stops such a try after its timeout", stuckAfter.get(), first.request, what)
}

// pick is pickLocked, unless something changed since changed was read.
func (t *turns) pick(changed chan struct{}) *flight {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-changed:
		return nil
	default:
		return t.pickLocked()
	}
}

// pickLocked is the held request that has waited longest since its last
// turn (the first to arrive, of those that have had none), or nil.
func (t *turns) pickLocked() *flight {
	var best *flight
	for _, f := range t.flights {
		if f.held == nil {
			continue
		}
		if best == nil || cmp.Or(cmp.Compare(f.last, best.last), cmp.Compare(f.arrived, best.arrived)) < 0 {
			best = f
		}
	}
	return best
}

// duration is a time.Duration safe to change while goroutines read it:
// a bound that a test makes shorter.
type duration struct{ ns atomic.Int64 }

func durationVar(d time.Duration) *duration {
	v := &duration{}
	v.set(d)
	return v
}

func (d *duration) get() time.Duration  { return time.Duration(d.ns.Load()) }
func (d *duration) set(v time.Duration) { d.ns.Store(int64(v)) }
