package sim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MaxQuantity is the most seats one booking may take.
const MaxQuantity = 10

// BookingRequest is one booking intent as the engine sees it. UserID comes
// from the authenticated session, never from the request body.
type BookingRequest struct {
	UserID   string
	EventID  int64
	Quantity int       // seats, 1..MaxQuantity
	Key      uuid.UUID // the idempotency key, chosen by the browser per intent
}

// Validate returns a 400 *Error for a request that can never succeed: a
// missing user, a nil key or a quantity outside 1..MaxQuantity.
func (r BookingRequest) Validate() error {
	switch {
	case r.UserID == "":
		return errUnauthorized()
	case r.Key == uuid.Nil:
		return errBadRequest(CodeInvalidKey, "Send an Idempotency-Key header holding a UUID made once per booking intent, e.g. "+exampleKey)
	case r.Quantity < 1 || r.Quantity > MaxQuantity:
		return errBadRequest(CodeInvalidQty, fmt.Sprintf("quantity must be a whole number from 1 to %d, got %d", MaxQuantity, r.Quantity))
	}
	return nil
}

const exampleKey = "7d9f2c4e-1b3a-4c5d-9e8f-0a1b2c3d4e5f"

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
	Pool  *pgxpool.Pool
	Clock Clock
	Trace *Trace
	Lane  string // the API instance's lane, e.g. LaneAPI(1)
	// Pause, when set, is called at each PausePoint with the request; a
	// forced interleaving blocks there (see Barrier). An error aborts the
	// booking, which is rolled back.
	Pause func(ctx context.Context, p PausePoint, req BookingRequest) error
}

// The statements of BookTicket, in the order it sends them.
const (
	sqlLockEvent   = `SELECT name, seats_left, starts_at FROM events WHERE id = $1 FOR UPDATE`
	sqlFindByKey   = `SELECT id, event_id, quantity, created_at FROM bookings WHERE user_id = $1 AND idempotency_key = $2`
	sqlTakeSeats   = `UPDATE events SET seats_left = seats_left - $2 WHERE id = $1 RETURNING seats_left`
	sqlInsertBooks = `INSERT INTO bookings (user_id, event_id, quantity, idempotency_key, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`
)

// SQLSTATE of a unique violation.
const uniqueViolation = "23505"

// BookTicket books req.Quantity seats of event req.EventID for req.UserID,
// at most once per (user, idempotency key). It runs one transaction
// (lesson, "How it works"):
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
// Refusals are *Error values with the HTTP status; nothing is stored for
// them, so the same key may try again later. Other errors (the database
// went away, ctx ended) are returned as they are; the transaction is rolled
// back.
func (e *Engine) BookTicket(ctx context.Context, req BookingRequest) (Result, error) {
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	res, err := e.bookTx(ctx, req)
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == uniqueViolation {
		if err := e.step(ctx, req, Event{Kind: KindRollback, Label: "23505: ROLLBACK all",
			Text: "unique violation 23505 on (user_id, idempotency_key): another copy committed first; the whole transaction is rolled back, seats included"}); err != nil {
			return Result{}, err
		}
		return e.readWinner(ctx, req)
	}
	return res, err
}

func (e *Engine) bookTx(ctx context.Context, req BookingRequest) (Result, error) {
	tx, err := e.Pool.Begin(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		// Rollback after Commit is a no-op; on a cancelled ctx it must still run.
		_ = tx.Rollback(context.WithoutCancel(ctx))
	}()

	var name string
	var seatsLeft int
	var startsAt time.Time
	err = tx.QueryRow(ctx, sqlLockEvent, req.EventID).Scan(&name, &seatsLeft, &startsAt)
	if errors.Is(err, pgx.ErrNoRows) {
		refusal := errEventNotFound(req.EventID)
		return Result{}, e.refuse(ctx, tx, req, refusal, fmt.Sprintf("no event %d: 404, nothing written", req.EventID))
	}
	if err != nil {
		return Result{}, fmt.Errorf("lock event %d: %w", req.EventID, err)
	}
	if err := e.step(ctx, req, Event{Kind: KindLock, SQL: sqlLockEvent, Label: fmt.Sprintf("BEGIN; lock event %d", req.EventID),
		Text: fmt.Sprintf("BEGIN; lock event %d FOR UPDATE (%d seats left)", req.EventID, seatsLeft)}); err != nil {
		return Result{}, err
	}

	prior, found, err := findByKey(ctx, tx, req)
	if err != nil {
		return Result{}, err
	}
	if found {
		if err := e.step(ctx, req, Event{Kind: KindLookup, SQL: sqlFindByKey, Found: true, BookingID: prior.PublicID(),
			Label: "find key → " + prior.PublicID(), Text: fmt.Sprintf("key %s already has %s", ShortKey(req.Key), prior.PublicID())}); err != nil {
			return Result{}, err
		}
		res, refusal := compare(prior, req)
		if refusal != nil {
			return Result{}, e.refuse(ctx, tx, req, refusal,
				fmt.Sprintf("%s was for event %d × %d, not event %d × %d: 409, nothing written",
					prior.PublicID(), prior.EventID, prior.Quantity, req.EventID, req.Quantity))
		}
		if err := tx.Commit(ctx); err != nil {
			return Result{}, fmt.Errorf("commit: %w", err)
		}
		return res, e.step(ctx, req, Event{Kind: KindCommit, BookingID: prior.PublicID(), Replayed: true, Label: "write nothing, COMMIT",
			Text: fmt.Sprintf("same event and quantity: replay %s, write nothing, COMMIT", prior.PublicID())})
	}
	if err := e.step(ctx, req, Event{Kind: KindLookup, SQL: sqlFindByKey, Label: "find key → none",
		Text: fmt.Sprintf("no booking has key %s yet", ShortKey(req.Key))}); err != nil {
		return Result{}, err
	}
	if err := e.pause(ctx, PauseAfterLookup, req); err != nil {
		return Result{}, err
	}

	if seatsLeft < req.Quantity {
		return Result{}, e.refuse(ctx, tx, req, errNotEnoughSeats(),
			fmt.Sprintf("%d seats asked, %d left: 409 %s", req.Quantity, seatsLeft, MsgNotEnoughSeats))
	}
	now := e.Clock.Now()
	if !startsAt.After(now) {
		return Result{}, e.refuse(ctx, tx, req, errEventStarted(), "the event has started: 409, nothing written")
	}

	var after int
	if err := tx.QueryRow(ctx, sqlTakeSeats, req.EventID, req.Quantity).Scan(&after); err != nil {
		return Result{}, fmt.Errorf("take seats: %w", err)
	}
	b := Booking{UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity, Key: req.Key, CreatedAt: now}
	if err := tx.QueryRow(ctx, sqlInsertBooks, b.UserID, b.EventID, b.Quantity, b.Key, b.CreatedAt).Scan(&b.ID); err != nil {
		return Result{}, err // a unique violation is handled by BookTicket
	}
	if err := e.step(ctx, req, Event{Kind: KindWrite, SQL: sqlInsertBooks, BookingID: b.PublicID(),
		Label: fmt.Sprintf("seats -%d, insert %s", req.Quantity, b.PublicID()),
		Text:  fmt.Sprintf("seats %d → %d, insert %s (not committed yet)", seatsLeft, after, b.PublicID())}); err != nil {
		return Result{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return Result{}, fmt.Errorf("commit: %w", err)
	}
	return Result{Booking: b}, e.step(ctx, req, Event{Kind: KindCommit, BookingID: b.PublicID(), Label: "COMMIT",
		Text: fmt.Sprintf("COMMIT: %s and its seats are stored together", b.PublicID())})
}

// refuse rolls tx back, traces why, and returns refusal.
func (e *Engine) refuse(ctx context.Context, tx pgx.Tx, req BookingRequest, refusal *Error, why string) error {
	if err := tx.Rollback(ctx); err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	if err := e.step(ctx, req, Event{Kind: KindRollback, Status: refusal.Status,
		Label: fmt.Sprintf("ROLLBACK (%d)", refusal.Status), Text: "ROLLBACK: " + why}); err != nil {
		return err
	}
	return refusal
}

// readWinner answers a request whose INSERT lost the race on the unique
// constraint: the winner has committed, so a fresh read sees it.
func (e *Engine) readWinner(ctx context.Context, req BookingRequest) (Result, error) {
	prior, found, err := findByKey(ctx, e.Pool, req)
	if err != nil {
		return Result{}, err
	}
	if !found {
		return Result{}, fmt.Errorf("unique violation on key %s, but no committed booking holds it", req.Key)
	}
	if err := e.step(ctx, req, Event{Kind: KindLookup, SQL: sqlFindByKey, Found: true, BookingID: prior.PublicID(),
		Label: "read winner → " + prior.PublicID(), Text: fmt.Sprintf("read the winner: key %s has %s", ShortKey(req.Key), prior.PublicID())}); err != nil {
		return Result{}, err
	}
	res, refusal := compare(prior, req)
	if refusal != nil {
		return Result{}, refusal
	}
	return res, nil
}

func findByKey(ctx context.Context, q Querier, req BookingRequest) (Booking, bool, error) {
	b := Booking{UserID: req.UserID, Key: req.Key}
	rows, err := q.Query(ctx, sqlFindByKey, req.UserID, req.Key)
	if err != nil {
		return b, false, fmt.Errorf("look up key: %w", err)
	}
	found := false
	for rows.Next() {
		if err := rows.Scan(&b.ID, &b.EventID, &b.Quantity, &b.CreatedAt); err != nil {
			return b, false, fmt.Errorf("look up key: %w", err)
		}
		found = true
	}
	if err := rows.Err(); err != nil {
		return b, false, fmt.Errorf("look up key: %w", err)
	}
	return b, found, nil
}

// compare decides what an existing booking means for a request with the same
// key: the same event and quantity is a replay; anything else is a conflict
// (lesson, "Advanced: where the logic lives": the query only says the booking
// exists, the service decides whether it is the same request).
func compare(prior Booking, req BookingRequest) (Result, *Error) {
	if prior.EventID != req.EventID || prior.Quantity != req.Quantity {
		return Result{}, errKeyReused()
	}
	return Result{Booking: prior, Replayed: true}, nil
}

func (e *Engine) pause(ctx context.Context, p PausePoint, req BookingRequest) error {
	if e.Pause == nil {
		return nil
	}
	if err := e.step(ctx, req, Event{Kind: KindPause, Label: "pause: " + string(p), Text: fmt.Sprintf("pause point %s: wait for the other copies", p)}); err != nil {
		return err
	}
	return e.Pause(ctx, p, req)
}

// step emits a step event on the engine's lane toward Postgres.
func (e *Engine) step(ctx context.Context, req BookingRequest, ev Event) error {
	a := AttemptFrom(ctx)
	ev.From, ev.To = e.Lane, LanePostgres
	ev.Intent, ev.Try = a.Intent, a.Try
	ev.Key = req.Key.String()
	return e.Trace.Emit(ctx, ev)
}

// ShortKey is the first 8 hex digits of a key, for captions: "3f2a9c1d…".
func ShortKey(k uuid.UUID) string {
	s := k.String()
	return strings.SplitN(s, "-", 2)[0] + "…"
}
