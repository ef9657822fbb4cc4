//go:build !solution

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BookTicket books req.Quantity seats of event req.EventID for req.UserID
// and answers the booking. It is yours to write, one exercise at a time:
// `learn exercises check` says which one you are on, its goal, and a hint
// when you ask. Each TODO below is one exercise.
//
// As it starts, it books every request it is sent (a retry after a lost
// answer books again), and its two writes are two transactions.
func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {
	// TODO(isolation): at REPEATABLE READ, a copy that waited for the
	// event's row lock fails with a serialization failure (SQLSTATE
	// 40001): try the whole transaction again.
	// TODO(under-lock): lock the event row, look the key up, and only then
	// check the seats.
	var left int
	err := db.QueryRow(ctx, `SELECT seats_left FROM events WHERE id = $1`, req.EventID).Scan(&left)
	if errors.Is(err, pgx.ErrNoRows) {
		return Answer{}, &Refusal{Status: 404, Code: "event_not_found", Message: fmt.Sprintf("There is no event %d", req.EventID)}
	}
	if err != nil {
		return Answer{}, err
	}
	if left < req.Quantity {
		return Answer{}, &Refusal{Status: 409, Code: "not_enough_seats", Message: fmt.Sprintf("Not enough seats left: %d left, you asked for %d", left, req.Quantity)}
	}
	// TODO(replay): a booking that already holds req.Key is answered as
	// it stands (Replayed), and nothing is written.
	// TODO(compare): unless it is for another event or quantity: 409.

	// TODO(one-transaction): each statement on db commits on its own, so a
	// crash between these two writes keeps the seats and stores no
	// booking. Make them one transaction.
	if _, err := db.Exec(ctx, `UPDATE events SET seats_left = seats_left - $2 WHERE id = $1`, req.EventID, req.Quantity); err != nil {
		return Answer{}, err
	}
	b := Booking{UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity, Key: req.Key}
	err = db.QueryRow(ctx, `INSERT INTO bookings (user_id, event_id, quantity, idempotency_key, created_at) VALUES ($1, $2, $3, $4, now()) RETURNING id, created_at`,
		b.UserID, b.EventID, b.Quantity, b.Key).Scan(&b.ID, &b.CreatedAt)
	// TODO(constraint): with a unique constraint (schema.sql), this insert
	// can fail with a unique violation, SQLSTATE 23505: another copy won.
	// TODO(per-user): a key belongs to one user.
	if err != nil {
		return Answer{}, err
	}
	return Answer{Booking: b}, nil
}
