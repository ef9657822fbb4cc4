package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/trace"
)

// MaxQuantity is the most seats one booking may take.
const MaxQuantity = 10

// Request is one booking intent as the engine sees it. UserID comes
// from the authenticated session, never from the request body.
type Request struct {
	UserID   string
	EventID  int64
	Quantity int       // seats, 1..MaxQuantity
	Key      uuid.UUID // the idempotency key, chosen by the browser per intent
}

// Validate returns a *Refusal for a request that can never succeed: 401 for
// a missing user, 400 for a nil key or a quantity outside 1..MaxQuantity.
func (r Request) Validate() error {
	switch {
	case r.UserID == "":
		return RefuseUnauthorized()
	case r.Key == uuid.Nil:
		return refuseBadRequest(CodeInvalidKey, "Send an Idempotency-Key header holding a UUID made once per booking intent, e.g. "+ExampleKey)
	case r.Quantity < 1 || r.Quantity > MaxQuantity:
		return refuseBadRequest(CodeInvalidQty, fmt.Sprintf("quantity must be a whole number from 1 to %d, got %d", MaxQuantity, r.Quantity))
	}
	return nil
}

// Booking is a committed booking.
type Booking struct {
	ID        int64
	UserID    string
	EventID   int64
	Quantity  int
	Key       uuid.UUID
	CreatedAt time.Time
}

// PublicID is the booking's id as the API shows it: "b" and the row id.
func (b Booking) PublicID() string { return PublicBookingID(b.ID) }

// PublicBookingID formats a bookings.id as the API shows it: 7 → "b7".
func PublicBookingID(id int64) string { return "b" + strconv.FormatInt(id, 10) }

// Result is a successful booking: the booking, and whether it is a replay of
// an earlier request with the same idempotency key (true) or was created by
// this request (false). Both are answered with 200.
type Result struct {
	Booking  Booking
	Replayed bool
}

// Engine books tickets in one PostgreSQL schema for one API instance. Each
// API instance has its own Engine and pool; they share nothing but the
// database. Trace may be nil.
type Engine struct {
	Clock  clock.Clock
	Trace  *trace.Trace
	Lane   string // the API instance's lane, e.g. LaneAPI(1)
	Design Design
	// Barrier, when set, holds every request at BarrierAt until all the
	// copies it waits for are there: a forced interleaving, shown as a pause
	// step. A request that ends without reaching BarrierAt (refused before
	// it, a replay found at the lookup, an error) leaves the barrier, so the
	// others do not wait for it. Every copy the barrier expects must call
	// BookTicket.
	Barrier   *Barrier
	BarrierAt Point
	// Transaction, when set, is the booking transaction the engine runs
	// instead of the plan of Design (PlanFor): a learner's own code
	// (Transaction says what it is given and must return). Design.Compare
	// still decides what a booking it found means. A Transaction that is
	// not a Plan is always run step by step, and the trace shows what it
	// reported rather than each of its statements' steps (its SQL is in
	// the SQL pane).
	Transaction Transaction
	// At, when set, is called at each Point with the request. It may return
	// ErrCrash (the instance dies there) or another error (the booking is
	// abandoned and rolled back).
	At func(ctx context.Context, p Point, req Request) error

	pool atomic.Pointer[pgxpool.Pool]
	// OnCommit, when set, runs between a new booking's COMMIT and its trace
	// step (tests: a slow report of a COMMIT).
	OnCommit func()

	flights flights // under Design.InFlight Answer409: the keys being booked
}

// flights are the (user, key) pairs whose requests are inside BookTicket,
// each with the number of them and a channel closed when the last leaves.
type flights struct {
	mu sync.Mutex
	m  map[[2]string]*flight
}

type flight struct {
	n    int
	done chan struct{}
}

// enter counts a request of (user, key) in and returns the call that
// counts it out.
func (f *flights) enter(user string, key uuid.UUID) (leave func()) {
	k := [2]string{user, key.String()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[[2]string]*flight{}
	}
	fl := f.m[k]
	if fl == nil {
		fl = &flight{done: make(chan struct{})}
		f.m[k] = fl
	}
	fl.n++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if fl.n--; fl.n == 0 {
			close(fl.done)
			delete(f.m, k)
		}
	}
}

// Fly counts req in flight until the call it returns: from BookTicket's
// start to its end, and, for an API instance that keeps its keys in a
// store, from the store's lookup to its write. Only under Design.InFlight
// Answer409; elsewhere it counts nothing.
func (e *Engine) Fly(req Request) (land func()) {
	if e.Design.InFlight != Answer409 {
		return func() {}
	}
	return e.flights.enter(req.UserID, req.Key)
}

// AwaitKey returns once no request of user with key is in flight (Fly) on
// this engine, or when ctx ends. It is tracked under Design.InFlight
// Answer409 only: a scenario's client that got 409 request_in_progress
// waits so for the request in flight to end, as the second its
// Retry-After asks would let it end in the world (elsewhere it returns at
// once).
func (e *Engine) AwaitKey(ctx context.Context, user string, key uuid.UUID) error {
	e.flights.mu.Lock()
	fl := e.flights.m[[2]string{user, key.String()}]
	e.flights.mu.Unlock()
	if fl == nil {
		return nil
	}
	select {
	case <-fl.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// New returns an engine on pool.
func New(pool *pgxpool.Pool, clock clock.Clock, trace *trace.Trace, lane string) *Engine {
	e := &Engine{Clock: clock, Trace: trace, Lane: lane}
	e.pool.Store(pool)
	return e
}

// Pool is the engine's connection pool.
func (e *Engine) Pool() *pgxpool.Pool { return e.pool.Load() }

// SwapPool makes the engine use pool from now on and returns the previous
// one; a scenario cuts an instance off its database this way.
func (e *Engine) SwapPool(pool *pgxpool.Pool) *pgxpool.Pool { return e.pool.Swap(pool) }

// SQLSTATE of a unique violation.
const uniqueViolation = "23505"

// LabelUniqueViolation labels the rollback of a request whose INSERT hit
// the unique constraint; Guards counts these.
const LabelUniqueViolation = "23505: ROLLBACK all"

// LabelSerializationRerun begins the label of the rollback of a transaction
// that PostgreSQL failed with 40001 and the engine runs again; Guards
// counts these.
const LabelSerializationRerun = "40001: rerun"

// LabelFindKey begins the label of a lookup's event (step 2 of BookTicket);
// Guards counts the ones that found the key.
const LabelFindKey = "find key → "

// BookTicket books req.Quantity seats of event req.EventID for req.UserID,
// at most once per (user, idempotency key). It is the service around the
// booking transaction (Transaction: the plan of e.Design, PlanFor, unless
// e.Transaction is set). In the correct design (the zero Design) it runs
// one transaction (lesson, "How it works"):
//
//  1. lock the event row (SELECT … FOR UPDATE); no such event: 404;
//  2. look up the booking for (user, key); if there is one, write nothing:
//     the transaction reports it existing, and the service compares it
//     (Compare): same event and quantity is a replay (Result.Replayed,
//     answered 200 even if the event has since sold out or started),
//     anything else is 409 MsgKeyReused;
//  3. only then check the seats (409 MsgNotEnoughSeats) and the start time
//     (409 event_started), decrement the seats, insert the booking (the
//     transaction reports it created), COMMIT;
//  4. a unique violation (SQLSTATE 23505) on (user_id, idempotency_key)
//     means another copy committed first: this whole transaction, seats
//     included, is rolled back, then the winner is read and answered as in 2.
//
// When nobody watches (no trace, no barrier, no hook) and the transaction
// is a plan, it is sent pipelined, in as few round trips as the plan's
// order allows (two for the lesson's); otherwise step by step, each step
// told to the trace. Both answer alike.
//
// Refusals are *Refusal values with the HTTP status; nothing is stored for
// them, so the same key may try again later. ErrCrash means the instance
// died at a Point. Other errors (the database went away, ctx ended) are
// returned as they are; the transaction is rolled back.
func (e *Engine) BookTicket(ctx context.Context, req Request) (Result, error) {
	// held: whether this request reached e.Barrier. A client's retry
	// (try 2 on) is none of the copies the barrier waits for, whose first
	// tries it interleaves: it passes as if it had been held.
	held := e.Barrier != nil && trace.AttemptFrom(ctx).Try > 1
	if b := e.Barrier; b != nil && !held {
		defer func() {
			if !held {
				b.Leave()
			}
		}()
	}
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	defer e.Fly(req)()
	var res Result
	var err error
	for try := 1; ; try++ {
		if c, ok := e.pipelined(); ok {
			res, err = e.bookPipelined(ctx, c, req)
		} else {
			res, err = e.bookStepwise(ctx, req, &held)
		}
		pgErr, ok := errors.AsType[*pgconn.PgError](err)
		if !ok || pgErr.Code != SerializationFailure {
			break
		}
		again := e.Design.On40001 == RetryTransaction && try < MaxTxTries
		if serr := e.step(ctx, req, serializationStep(e.Design, try, again)); serr != nil {
			return Result{}, serr
		}
		if !again {
			if e.Design.On40001 == RetryTransaction {
				err = fmt.Errorf("after %d runs of the transaction: %w", try, err)
			}
			return Result{}, err // the API answers it (503 serialization_failure, or 500)
		}
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == uniqueViolation {
		// The winner has committed in the database; its COMMIT is told
		// first, so the screen keeps the database's order.
		key := req.Key.String()
		if err := e.Trace.WaitFor(ctx, func(ev trace.Event) bool { return ev.Kind == trace.KindCommit && !ev.Replayed && ev.Key == key }); err != nil {
			return Result{}, err
		}
		if err := e.step(ctx, req, trace.Event{Kind: trace.KindRollback, Label: LabelUniqueViolation,
			Text: fmt.Sprintf("unique violation 23505 on %s: another transaction with this key committed first; this whole transaction is rolled back, seats included",
				pgErr.ConstraintName)}); err != nil {
			return Result{}, err
		}
		return e.readWinner(ctx, req)
	}
	return res, err
}

// serializationStep is the step of a booking transaction that PostgreSQL
// failed with 40001 on its try-th run: rolled back, and run again when
// again is set.
func serializationStep(d Design, try int, again bool) trace.Event {
	text := fmt.Sprintf("serialization failure 40001 at %s: a row this transaction reads or locks was changed by a transaction that committed after its snapshot; PostgreSQL rolls the whole transaction back", d.Isolation.SQL())
	label := "40001: ROLLBACK"
	switch {
	case again:
		label = fmt.Sprintf("%s (%d/%d)", LabelSerializationRerun, try+1, MaxTxTries)
		text += fmt.Sprintf(", and the engine runs it again in a new snapshot (run %d of at most %d)", try+1, MaxTxTries)
	case d.On40001 == RetryTransaction:
		text += fmt.Sprintf(", after %d runs: the engine stops running it again and answers 503", try)
	case d.On40001 == Answer503:
		text += ", and the engine answers 503 serialization_failure: nothing stored, the client retries with the same key"
	default:
		text += ", and the engine takes it for an error like any other: 500"
	}
	return trace.Event{Kind: trace.KindRollback, Label: label, Text: text}
}

// transaction is the booking transaction e runs: e.Transaction, or the
// plan of e.Design.
func (e *Engine) transaction() Transaction {
	if e.Transaction != nil {
		return e.Transaction
	}
	return compiled(e.Design).plan
}

// Pipelined returns the plan BookTicket sends pipelined, and whether it
// does: nobody watches (no trace, so no step has to wait for a viewer
// between two statements), no scenario holds the request at a Point (no
// barrier, no hook), and the transaction is a plan (a Transaction of one's
// own is Go code, run step by step). This is how learn serve and the
// benchmarks book.
func (e *Engine) Pipelined() (Plan, bool) {
	c, ok := e.pipelined()
	return c.plan, ok
}

// pipelined is Pipelined's plan, compiled: the design's is made once
// (compiled), a Plan set as e.Transaction is compiled here.
func (e *Engine) pipelined() (compiledPlan, bool) {
	if e.Trace != nil || e.Barrier != nil || e.At != nil {
		return compiledPlan{}, false
	}
	switch t := e.Transaction.(type) {
	case nil:
		return compiled(e.Design), true
	case Plan:
		return compiledPlan{plan: t, rounds: t.rounds()}, true
	}
	return compiledPlan{}, false
}

// readWinner answers a request whose INSERT lost the race on the unique
// constraint: the winner has committed, so a fresh read sees it.
func (e *Engine) readWinner(ctx context.Context, req Request) (Result, error) {
	prior, found, err := e.find(ctx, e.Pool(), req)
	if err != nil {
		return Result{}, err
	}
	if !found {
		return Result{}, fmt.Errorf("unique violation on key %s, but no committed booking holds it", req.Key)
	}
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindLookup, SQL: e.findOp().statement(), Found: true, BookingID: prior.PublicID(),
		Label: "read winner → " + prior.PublicID(), Text: fmt.Sprintf("read the winner: key %s has %s", trace.ShortKey(req.Key), prior.PublicID())}); err != nil {
		return Result{}, err
	}
	res, refusal := e.Compare(prior, req)
	if refusal != nil {
		return Result{}, refusal
	}
	return res, nil
}

// findOp is the design's lookup of the key: the step its plans look the
// key up with.
func (e *Engine) findOp() Op {
	if e.Design.KeyAcrossUsers {
		return OpFindKeyAnyUser
	}
	return OpFindKey
}

// find looks up the booking that holds req's key in q, with the design's
// lookup (findOp); found is false when there is none. Should a broken
// design have stored several, the first row PostgreSQL returns is taken.
func (e *Engine) find(ctx context.Context, q Querier, req Request) (b Booking, found bool, err error) {
	op, s := e.findOp(), newState(Plan{}, req, nil, false)
	err = q.QueryRow(ctx, op.statement(), s.args(op)...).Scan(s.dest(op, nil)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return Booking{}, false, nil
	}
	if err != nil {
		return Booking{}, false, stepError(Plan{}, op, req, err)
	}
	return s.prior, true, nil
}

// BookingByID reads a committed booking by its row id.
func (e *Engine) BookingByID(ctx context.Context, id int64) (Booking, error) {
	var b Booking
	var key pgtype.UUID // NULL once the sweeper removed it
	err := e.Pool().QueryRow(ctx, sqlBookingByID, id).Scan(&b.ID, &b.UserID, &b.EventID, &b.Quantity, &key, &b.CreatedAt)
	if err != nil {
		return b, fmt.Errorf("read booking %d: %w", id, err)
	}
	if key.Valid {
		b.Key = key.Bytes
	}
	return b, nil
}

// Compare decides what an existing booking means for a request with the same
// key, by the design's CompareRule: the same user, event and quantity is a
// replay; anything else is a conflict (lesson, "Advanced: where the logic
// lives": the query only says the booking exists, the service decides
// whether it is the same request).
func (e *Engine) Compare(prior Booking, req Request) (Result, *Refusal) {
	same := true
	switch e.Design.Compare {
	case CompareAll:
		same = prior.UserID == req.UserID && prior.EventID == req.EventID && prior.Quantity == req.Quantity
	case CompareEventQuantity:
		same = prior.EventID == req.EventID && prior.Quantity == req.Quantity
	}
	if !same {
		return Result{}, RefuseKeyReused()
	}
	return Result{Booking: prior, Replayed: true}, nil
}

// at holds the request at the barrier (setting *held) and runs the
// scenario's hook at point p, tracing the pause or the crash.
func (e *Engine) at(ctx context.Context, p Point, req Request, held *bool) error {
	if e.Barrier != nil && e.BarrierAt == p && !*held { // a transaction run again passes
		if err := e.Hold(ctx, req, e.Barrier, p, held); err != nil {
			return err
		}
	}
	if e.At == nil {
		return nil
	}
	err := e.At(ctx, p, req)
	if errors.Is(err, ErrCrash) {
		what := "its transaction dies with its connection: PostgreSQL rolls it back"
		if p == PointAfterCommit {
			what = "after COMMIT, before it could answer"
		}
		// learn's stand-in for a dying process: the handler's database
		// connection is closed and its HTTP connection cut, with no answer.
		if serr := e.step(ctx, req, trace.Event{Kind: trace.KindCrash, To: e.Lane, Label: "✕ dies " + pointWords[p],
			Text: fmt.Sprintf("%s crashes at %s (learn aborts the handler's database and HTTP connections, as a dying process would): %s", e.Lane, p, what)}); serr != nil {
			return serr
		}
	}
	return err
}

// Hold holds req at barrier b, at point p of its booking: it tells the
// pause on the engine's lane, then waits until every copy b expects has
// arrived or left. *held is set once the request counts as arrived (Wait
// counts it so even if ctx ends); a caller that holds requests at b must
// Leave it on every path where *held is still false.
func (e *Engine) Hold(ctx context.Context, req Request, b *Barrier, p Point, held *bool) error {
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindPause, To: e.Lane, Label: "held " + pointWords[p],
		Text: fmt.Sprintf("forced interleaving: held at %s until every request it waits for is there", p)}); err != nil {
		return err
	}
	*held = true
	return b.Wait(ctx)
}

// step emits a step event on the engine's lane toward Postgres (or ev.To).
func (e *Engine) step(ctx context.Context, req Request, ev trace.Event) error {
	ev.From = e.Lane
	if ev.To == "" {
		ev.To = trace.LanePostgres
	}
	ev.Key, ev.EventID = req.Key.String(), req.EventID
	return e.Trace.Emit(ctx, ev)
}

// RowLockError is an error of the statement that takes the event's row
// lock (SELECT … FOR UPDATE; in a design without it, the UPDATE of the
// seats, which takes it then): nothing is written before it. The API
// answers one that waited too long as 503 event_busy.
type RowLockError struct {
	Step string // "read event 7", "take seats"
	Err  error
}

func (e *RowLockError) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *RowLockError) Unwrap() error { return e.Err }
