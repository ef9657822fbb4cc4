//go:build solution

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BookTicket books req.Quantity seats of event req.EventID for
// req.UserID at most once per idempotency key: the lesson's transaction.
// (learn's reference solution of the exercises' last step.)
func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {
	a, err := bookOnce(ctx, db, req)
	var pe *pgconn.PgError
	// At REPEATABLE READ (or SERIALIZABLE) a copy that waited for the row
	// lock is refused with a serialization failure: it runs again, a new
	// transaction with a new snapshot, which sees the winner's booking.
	for try := 1; try < 5 && errors.As(err, &pe) && pe.Code == "40001"; try++ {
		a, err = bookOnce(ctx, db, req)
	}
	if errors.As(err, &pe) && pe.Code == "23505" {
		// Another copy inserted the key first: its transaction won, this
		// one rolled back whole (seats included). Answer as a lookup would.
		b, err := find(ctx, db, req)
		if err != nil {
			return Answer{}, err
		}
		return replay(b, req)
	}
	return a, err
}

// bookOnce is one transaction: lock the event row, look the key up, and
// only then check the seats, take them and insert.
func bookOnce(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return Answer{}, err
	}
	defer tx.Rollback(ctx)
	var left int
	err = tx.QueryRow(ctx, `SELECT seats_left FROM events WHERE id = $1 FOR UPDATE`, req.EventID).Scan(&left)
	if errors.Is(err, pgx.ErrNoRows) {
		return Answer{}, &Refusal{Status: 404, Code: "event_not_found", Message: fmt.Sprintf("There is no event %d", req.EventID)}
	}
	if err != nil {
		return Answer{}, err
	}
	if b, err := find(ctx, tx, req); err == nil {
		return replay(b, req)
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return Answer{}, err
	}
	if left < req.Quantity {
		return Answer{}, &Refusal{Status: 409, Code: "not_enough_seats", Message: fmt.Sprintf("Not enough seats left: %d left, you asked for %d", left, req.Quantity)}
	}
	if _, err := tx.Exec(ctx, `UPDATE events SET seats_left = seats_left - $2 WHERE id = $1`, req.EventID, req.Quantity); err != nil {
		return Answer{}, err
	}
	b := Booking{UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity, Key: req.Key}
	err = tx.QueryRow(ctx, `INSERT INTO bookings (user_id, event_id, quantity, idempotency_key, created_at) VALUES ($1, $2, $3, $4, now()) RETURNING id, created_at`,
		b.UserID, b.EventID, b.Quantity, b.Key).Scan(&b.ID, &b.CreatedAt)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Booking: b}, tx.Commit(ctx)
}

// querier is a transaction or the pool.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// find is the user's booking that holds the request's key.
func find(ctx context.Context, q querier, req Request) (Booking, error) {
	b := Booking{UserID: req.UserID, Key: req.Key}
	err := q.QueryRow(ctx, `SELECT id, event_id, quantity, created_at FROM bookings WHERE user_id = $1 AND idempotency_key = $2`, req.UserID, req.Key).
		Scan(&b.ID, &b.EventID, &b.Quantity, &b.CreatedAt)
	return b, err
}

// replay answers the booking that already holds the key: the same one for
// the same request, 409 for another event or quantity.
func replay(b Booking, req Request) (Answer, error) {
	if b.EventID != req.EventID || b.Quantity != req.Quantity {
		return Answer{}, &Refusal{Status: 409, Code: "key_reused", Message: "This idempotency key was already used for a different booking"}
	}
	return Answer{Booking: b, Replayed: true}, nil
}
