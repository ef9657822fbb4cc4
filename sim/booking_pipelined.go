package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipelined reports whether BookTicket may send its statements in two
// round trips instead of one per statement: nobody watches (no trace, so
// no step has to wait for a viewer between two statements), no scenario
// holds the request at a Point (no barrier, no hook), and the design is
// the lesson's. This is how learn serve and the benchmarks book.
func (e *Engine) pipelined() bool {
	return e.Trace == nil && e.Barrier == nil && e.At == nil && e.Design == (Design{})
}

// The round trips of bookPipelined, each a pipeline of statements ended
// by one Sync, so PostgreSQL runs them in order and answers them together.
// The statements and their order are BookTicket's own:
//
//	1. BEGIN; lock the event row (FOR UPDATE); look up (user, key)
//	2a. new booking: take the seats; insert the booking; COMMIT
//	2b. a replay: COMMIT (nothing written); a refusal: ROLLBACK
//
// The lookup runs after the lock in the same session, so it sees what the
// copy that held the lock before committed, exactly as when it is sent on
// its own.

// bookPipelined is BookTicket for the lesson's design when nobody watches
// (see pipelined): the same transaction, the same statements in the same
// order, the same answers and errors, in two round trips.
func (e *Engine) bookPipelined(ctx context.Context, req BookingRequest) (Result, error) {
	pool := e.Pool()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("begin: %w", err)
	}
	res, err := e.bookOn(ctx, conn, req)
	// A connection left inside a transaction (an error between BEGIN and
	// COMMIT, a cancelled ctx) is rolled back here; if even that fails,
	// the pool closes it instead of handing it out again.
	if conn.Conn().PgConn().TxStatus() != 'I' {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
	conn.Release()
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == uniqueViolation {
		// Another copy committed first: everything of this transaction,
		// seats included, is rolled back; answer with the winner.
		return e.readWinner(ctx, req)
	}
	return res, err
}

func (e *Engine) bookOn(ctx context.Context, conn *pgxpool.Conn, req BookingRequest) (Result, error) {
	// The key goes as 16 bytes in PostgreSQL's binary format; a
	// uuid.UUID would be sent as text through its driver.Valuer.
	key := pgtype.UUID{Bytes: req.Key, Valid: true}
	var b pgx.Batch
	b.Queue("BEGIN")
	b.Queue(sqlLockEvent, req.EventID)
	b.Queue(sqlFindByKey, req.UserID, key)
	br := conn.SendBatch(ctx, &b)
	var seatsLeft int
	var name string
	var startsAt time.Time
	prior := Booking{Key: req.Key}
	_, err := br.Exec()
	if err != nil {
		br.Close()
		return Result{}, fmt.Errorf("begin: %w", err)
	}
	err = br.QueryRow().Scan(&name, &seatsLeft, &startsAt)
	eventFound := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		br.Close()
		return Result{}, fmt.Errorf("read event %d: %w", req.EventID, err)
	}
	err = br.QueryRow().Scan(&prior.ID, &prior.UserID, &prior.EventID, &prior.Quantity, &prior.CreatedAt)
	found := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		br.Close()
		return Result{}, fmt.Errorf("look up key: %w", err)
	}
	if err := br.Close(); err != nil {
		return Result{}, fmt.Errorf("look up key: %w", err)
	}

	end := func(stmt string, refusal *Error) error {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
		if refusal != nil {
			return refusal
		}
		return nil
	}
	switch {
	case !eventFound:
		return Result{}, end("ROLLBACK", errEventNotFound(req.EventID))
	case found:
		res, refusal := e.compare(prior, req)
		if refusal != nil {
			return Result{}, end("ROLLBACK", refusal)
		}
		if err := end("COMMIT", nil); err != nil {
			return Result{}, err
		}
		return res, nil
	case seatsLeft < req.Quantity:
		return Result{}, end("ROLLBACK", errNotEnoughSeats(seatsLeft, req.Quantity))
	}
	// PostgreSQL keeps microseconds: a replay must read back the very time
	// the first answer showed.
	now := e.Clock.Now().Truncate(time.Microsecond)
	if !startsAt.After(now) {
		return Result{}, end("ROLLBACK", errEventStarted())
	}

	nb := Booking{UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity, Key: req.Key, CreatedAt: now}
	b = pgx.Batch{}
	b.Queue(sqlTakeSeats, req.EventID, req.Quantity)
	b.Queue(sqlInsertBooks, nb.UserID, nb.EventID, nb.Quantity, key, nb.CreatedAt)
	b.Queue("COMMIT")
	br = conn.SendBatch(ctx, &b)
	var after int
	if err := br.QueryRow().Scan(&after); err != nil {
		br.Close()
		return Result{}, fmt.Errorf("take seats: %w", err)
	}
	if err := br.QueryRow().Scan(&nb.ID); err != nil {
		br.Close()
		return Result{}, err // a unique violation is handled by bookPipelined
	}
	if _, err := br.Exec(); err != nil {
		br.Close()
		return Result{}, fmt.Errorf("commit: %w", err)
	}
	if err := br.Close(); err != nil {
		return Result{}, fmt.Errorf("commit: %w", err)
	}
	return Result{Booking: nb}, nil
}
