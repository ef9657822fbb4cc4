package engine

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Transaction is the booking transaction: the seam where a way of booking
// plugs into the engine. The lab's designs plug in as Plans (PlanFor); a
// learner's own Go code, written against pgx, plugs in as any other type
// with this method (Engine.Transaction).
//
// Book is given a database transaction the engine has begun (READ
// COMMITTED, read-write), the engine's clock (Tx.Now) and a valid request
// (Request.Validate has passed). It runs the transaction's statements and
// reports what the bookings table holds for the request's key: Created,
// the booking it inserted, seats taken, not yet committed; or Existing,
// the booking that already held the key, having written nothing. It
// decides nothing about replay or conflict: the engine (the service)
// compares an existing booking with the request (Engine.Compare) and
// answers 200 with it or 409 key_reused, commits or rolls back, and tells
// the steps it knows. It must not commit or roll back tx itself.
//
// A request that can never book is refused with a *Refusal as the error:
// RefuseNoEvent, RefuseNotEnoughSeats, RefuseStarted. Any other error is
// returned as it is, PostgreSQL's unique violation (SQLSTATE 23505) among
// them: the engine rolls the whole transaction back, seats included, then
// reads the booking that won the key and answers as for Existing.
type Transaction interface {
	Book(ctx context.Context, tx Tx, req Request) (TxReport, error)
}

// Tx is what a booking Transaction is given besides the request: the
// statements of the database transaction the engine began, which the
// engine ends, and the engine's clock.
type Tx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	// Now is the time on the engine's clock, to the microsecond
	// PostgreSQL keeps: what a new booking's created_at is, and what the
	// start check compares the event's start with. A run on a fake clock
	// reads the scenario's time.
	Now() time.Time
}

// KeyState is what a booking transaction found for the request's key.
type KeyState string

// The states a Transaction reports.
const (
	// Created: the transaction inserted the booking (and took its seats);
	// the engine commits it.
	Created KeyState = "created"
	// Existing: the booking already held the key; the transaction wrote
	// nothing, and the engine compares it with the request.
	Existing KeyState = "existing"
)

// TxReport is what a booking Transaction reports: the state of the key,
// and the booking that holds it (the one inserted, or the one found). The
// booking's Key is the request's; its ID, user, event, quantity and
// created_at are the row's.
type TxReport struct {
	State   KeyState
	Booking Booking
}

// stepTx is the Tx the engine gives a Transaction it runs step by step:
// the database transaction, the clock, and, for a Plan, the engine to
// tell its steps to and hold the request at.
type stepTx struct {
	pgx.Tx
	e    *Engine
	held *bool // set once the request counts as arrived at e.Barrier
}

// Now is the engine's clock, to the microsecond: PostgreSQL keeps
// microseconds, and a replay must read back the very time the first answer
// showed.
func (t *stepTx) Now() time.Time { return t.e.Clock.Now().Truncate(time.Microsecond) }
