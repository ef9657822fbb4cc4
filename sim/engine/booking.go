package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dustin/go-humanize/english"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	// At, when set, is called at each Point with the request. It may return
	// ErrCrash (the instance dies there) or another error (the booking is
	// abandoned and rolled back).
	At func(ctx context.Context, p Point, req Request) error

	pool atomic.Pointer[pgxpool.Pool]
	// OnCommit, when set, runs between a new booking's COMMIT and its trace
	// step (tests: a slow report of a COMMIT).
	OnCommit func()
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

// The statements of BookTicket, in the order it sends them.
const (
	sqlLockEvent   = `SELECT name, seats_left, starts_at FROM events WHERE id = $1 FOR UPDATE`
	sqlReadEvent   = `SELECT name, seats_left, starts_at FROM events WHERE id = $1`
	sqlFindByKey   = `SELECT id, user_id, event_id, quantity, created_at FROM bookings WHERE user_id = $1 AND idempotency_key = $2`
	sqlFindAnyUser = `SELECT id, user_id, event_id, quantity, created_at FROM bookings WHERE idempotency_key = $1`
	sqlTakeSeats   = `UPDATE events SET seats_left = seats_left - $2 WHERE id = $1 RETURNING seats_left`
	sqlInsertBooks = `INSERT INTO bookings (user_id, event_id, quantity, idempotency_key, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`
	sqlBookingByID = `SELECT id, user_id, event_id, quantity, idempotency_key, created_at FROM bookings WHERE id = $1`
)

// The engine's transactions run at READ COMMITTED, whatever the session's
// default_transaction_isolation says (a server, database or role may make
// it serializable): a copy that waited for the row lock must then read the
// row as the copy before it committed it, and find its booking (lesson,
// "How it works"), where REPEATABLE READ or SERIALIZABLE would fail it
// with 40001. The level is the engine's design, not the server's:
// sqlBegin begins the pipelined transaction, and txOptions, the same
// options as pgx sends them, the step-by-step one.
const sqlBegin = "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE"

var txOptions = pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite}

// SQLSTATE of a unique violation.
const uniqueViolation = "23505"

// LabelUniqueViolation labels the rollback of a request whose INSERT hit
// the unique constraint; Guards counts these.
const LabelUniqueViolation = "23505: ROLLBACK all"

// BookTicket books req.Quantity seats of event req.EventID for req.UserID,
// at most once per (user, idempotency key). In the correct design (the zero
// Design) it runs one transaction (lesson, "How it works"):
//
//  1. lock the event row (SELECT … FOR UPDATE); no such event: 404;
//  2. look up the booking for (user, key); if there is one, write nothing:
//     same event and quantity is a replay (Result.Replayed, answered 200 even
//     if the event has since sold out or started), anything else is 409
//     MsgKeyReused;
//  3. only then check the seats (409 MsgNotEnoughSeats) and the start time
//     (409 event_started), decrement the seats, insert the booking, COMMIT;
//  4. a unique violation (SQLSTATE 23505) on (user_id, idempotency_key)
//     means another copy committed first: this whole transaction, seats
//     included, is rolled back, then the winner is read and answered as in 2.
//
// Refusals are *Refusal values with the HTTP status; nothing is stored for
// them, so the same key may try again later. ErrCrash means the instance
// died at a Point. Other errors (the database went away, ctx ended) are
// returned as they are; the transaction is rolled back.
func (e *Engine) BookTicket(ctx context.Context, req Request) (Result, error) {
	held := false // whether this request reached e.Barrier
	if b := e.Barrier; b != nil {
		defer func() {
			if !held {
				b.Leave()
			}
		}()
	}
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	if e.pipelined() {
		return e.bookPipelined(ctx, req)
	}
	res, err := e.bookTx(ctx, req, &held)
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

// bookTx runs the transaction of BookTicket; *held is set when the request
// reaches the barrier.
func (e *Engine) bookTx(ctx context.Context, req Request, held *bool) (Result, error) {
	tx, err := e.Pool().BeginTx(ctx, txOptions)
	if err != nil {
		return Result{}, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		// Rollback after Commit is a no-op; on a cancelled ctx it must still run.
		_ = tx.Rollback(context.WithoutCancel(ctx))
	}()

	d := e.Design
	// lookup looks the key up at its place in the design; a request that
	// goes on past it may be held there (PointAfterLookup).
	lookup := func() (Result, bool, error) {
		res, done, err := e.lookup(ctx, tx, req)
		if done || err != nil {
			return res, done, err
		}
		return Result{}, false, e.at(ctx, PointAfterLookup, req, held)
	}
	begin := "BEGIN; "
	if d.Lookup == LookupBeforeLock {
		if res, done, err := lookup(); done || err != nil {
			return res, err
		}
		begin = "" // the transaction began with the lookup
	}
	read, label := sqlLockEvent, fmt.Sprintf("%slock event %d", begin, req.EventID)
	if d.NoRowLock {
		read, label = sqlReadEvent, fmt.Sprintf("%sread event %d, no lock", begin, req.EventID)
	}
	var name string
	var seatsLeft int
	var startsAt time.Time
	err = tx.QueryRow(ctx, read, req.EventID).Scan(&name, &seatsLeft, &startsAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Result{}, e.refuse(ctx, tx, req, RefuseNoEvent(req.EventID), fmt.Sprintf("no event %d: 404, nothing written", req.EventID))
	}
	if err != nil {
		return Result{}, &RowLockError{Step: fmt.Sprintf("read event %d", req.EventID), Err: err}
	}
	text := fmt.Sprintf("%slock event %d FOR UPDATE (%s left)", begin, req.EventID, english.Plural(seatsLeft, "seat", ""))
	if d.NoRowLock {
		text = fmt.Sprintf("%sread event %d without a lock (%s left): another copy may be doing the same", begin, req.EventID, english.Plural(seatsLeft, "seat", ""))
	}
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindLock, SQL: read, Label: label, Text: text}); err != nil {
		return Result{}, err
	}
	if d.Lookup == LookupAfterLock || d.Lookup == NoLookup {
		if res, done, err := lookup(); done || err != nil {
			return res, err
		}
	}
	if seatsLeft < req.Quantity {
		return Result{}, e.refuse(ctx, tx, req, RefuseNotEnoughSeats(seatsLeft, req.Quantity),
			fmt.Sprintf("%s asked, %d left: 409 %s", english.Plural(req.Quantity, "seat", ""), seatsLeft, MsgNotEnoughSeats))
	}
	// PostgreSQL keeps microseconds: a replay must read back the very time
	// the first answer showed.
	now := e.Clock.Now().Truncate(time.Microsecond)
	if !startsAt.After(now) {
		return Result{}, e.refuse(ctx, tx, req, RefuseStarted(), "the event has started: 409, nothing written")
	}
	if d.Lookup == LookupAfterSeatCheck {
		if res, done, err := lookup(); done || err != nil {
			return res, err
		}
	}

	var after int
	if err := tx.QueryRow(ctx, sqlTakeSeats, req.EventID, req.Quantity).Scan(&after); err != nil {
		if d.NoRowLock { // the UPDATE takes the row lock the design skipped
			return Result{}, &RowLockError{Step: "take seats", Err: err}
		}
		return Result{}, fmt.Errorf("take seats: %w", err)
	}
	b := Booking{UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity, Key: req.Key, CreatedAt: now}
	if err := tx.QueryRow(ctx, sqlInsertBooks, b.UserID, b.EventID, b.Quantity, b.Key, b.CreatedAt).Scan(&b.ID); err != nil {
		return Result{}, err // a unique violation is handled by BookTicket
	}
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindWrite, SQL: sqlInsertBooks, BookingID: b.PublicID(),
		Label: fmt.Sprintf("seats -%d, insert %s", req.Quantity, b.PublicID()),
		Text:  fmt.Sprintf("seats %d → %d, insert %s (not committed yet)", seatsLeft, after, b.PublicID())}); err != nil {
		return Result{}, err
	}
	if err := e.at(ctx, PointBeforeCommit, req, held); err != nil {
		if errors.Is(err, ErrCrash) {
			// A dying process drops its connection; PostgreSQL rolls back.
			_ = tx.Conn().Close(context.WithoutCancel(ctx))
		}
		return Result{}, err
	}
	// From COMMIT until it is told, a copy that reads this booking waits
	// (lookup): the trace keeps the database's order.
	told := e.Trace.Writing(req.Key.String())
	defer told()
	if err := tx.Commit(ctx); err != nil {
		return Result{}, fmt.Errorf("commit: %w", err)
	}
	if e.OnCommit != nil {
		e.OnCommit()
	}
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindCommit, BookingID: b.PublicID(), Label: "COMMIT",
		Text: fmt.Sprintf("COMMIT: %s and its seats are stored together", b.PublicID())}); err != nil {
		return Result{}, err
	}
	told()
	if err := e.at(ctx, PointAfterCommit, req, held); err != nil {
		return Result{}, err
	}
	return Result{Booking: b}, nil
}

// LabelFindKey begins the label of a lookup's event (step 2 of BookTicket);
// Guards counts the ones that found the key.
const LabelFindKey = "find key → "

// lookup looks the key up in tx (step 2 of BookTicket): a booking found is
// compared with req and either replayed, committing nothing new (done), or
// refused with 409 (done, with the refusal). Nothing found, or a design
// that never looks, goes on (not done).
func (e *Engine) lookup(ctx context.Context, tx pgx.Tx, req Request) (Result, bool, error) {
	d := e.Design
	if d.Lookup == NoLookup {
		return Result{}, false, nil
	}
	prior, found, err := e.find(ctx, tx, req)
	if err != nil || !found {
		if err == nil {
			err = e.step(ctx, req, trace.Event{Kind: trace.KindLookup, SQL: e.findSQL(), Label: LabelFindKey + "none",
				Text: fmt.Sprintf("no booking has key %s yet", trace.ShortKey(req.Key))})
		}
		return Result{}, false, err
	}
	// The booking found may be committed but not yet told: tell it first.
	if err := e.Trace.AwaitWrites(ctx, req.Key.String()); err != nil {
		return Result{}, true, err
	}
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindLookup, SQL: e.findSQL(), Found: true, BookingID: prior.PublicID(),
		Label: LabelFindKey + prior.PublicID(), Text: fmt.Sprintf("key %s already has %s", trace.ShortKey(req.Key), prior.PublicID())}); err != nil {
		return Result{}, true, err
	}
	res, refusal := e.Compare(prior, req)
	if refusal != nil {
		return Result{}, true, e.refuse(ctx, tx, req, refusal,
			fmt.Sprintf("%s is %s's booking of event %d × %d, not this request (event %d × %d): 409, nothing written",
				prior.PublicID(), prior.UserID, prior.EventID, prior.Quantity, req.EventID, req.Quantity))
	}
	if err := tx.Commit(ctx); err != nil {
		return Result{}, true, fmt.Errorf("commit: %w", err)
	}
	why := map[CompareRule]string{CompareAll: "same user, event and quantity", CompareEventQuantity: "same event and quantity (the user not compared)",
		NoCompare: "no comparison made"}[d.Compare]
	return res, true, e.step(ctx, req, trace.Event{Kind: trace.KindCommit, BookingID: prior.PublicID(), Replayed: true,
		Label: "write nothing, COMMIT", Text: fmt.Sprintf("%s: replay %s, write nothing, COMMIT", why, prior.PublicID())})
}

// refuse rolls tx back, traces why, and returns refusal.
func (e *Engine) refuse(ctx context.Context, tx pgx.Tx, req Request, refusal *Refusal, why string) error {
	if err := tx.Rollback(ctx); err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindRollback, Status: refusal.Status,
		Label: fmt.Sprintf("ROLLBACK (%d)", refusal.Status), Text: "ROLLBACK: " + why}); err != nil {
		return err
	}
	return refusal
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
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindLookup, SQL: e.findSQL(), Found: true, BookingID: prior.PublicID(),
		Label: "read winner → " + prior.PublicID(), Text: fmt.Sprintf("read the winner: key %s has %s", trace.ShortKey(req.Key), prior.PublicID())}); err != nil {
		return Result{}, err
	}
	res, refusal := e.Compare(prior, req)
	if refusal != nil {
		return Result{}, refusal
	}
	return res, nil
}

func (e *Engine) findSQL() string {
	if e.Design.KeyAcrossUsers {
		return sqlFindAnyUser
	}
	return sqlFindByKey
}

// find looks up the booking that holds req's key (of req's user, unless the
// design looks across users); found is false when there is none. Should a
// broken design have stored several, the first row PostgreSQL returns is
// taken.
func (e *Engine) find(ctx context.Context, q Querier, req Request) (b Booking, found bool, err error) {
	var row pgx.Row
	if e.Design.KeyAcrossUsers {
		row = q.QueryRow(ctx, sqlFindAnyUser, req.Key)
	} else {
		row = q.QueryRow(ctx, sqlFindByKey, req.UserID, req.Key)
	}
	// The statement does not select the key: it is req's, which it matched.
	b.Key = req.Key
	err = row.Scan(&b.ID, &b.UserID, &b.EventID, &b.Quantity, &b.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Booking{}, false, nil
	}
	if err != nil {
		return Booking{}, false, fmt.Errorf("look up key: %w", err)
	}
	return b, true, nil
}

// BookingByID reads a committed booking by its row id.
func (e *Engine) BookingByID(ctx context.Context, id int64) (Booking, error) {
	var b Booking
	err := e.Pool().QueryRow(ctx, sqlBookingByID, id).Scan(&b.ID, &b.UserID, &b.EventID, &b.Quantity, &b.Key, &b.CreatedAt)
	if err != nil {
		return b, fmt.Errorf("read booking %d: %w", id, err)
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
	if e.Barrier != nil && e.BarrierAt == p {
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
