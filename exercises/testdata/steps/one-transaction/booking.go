package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BookTicket, as the exercise one-transaction leaves it: both writes in
// one transaction.
func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return Answer{}, err
	}
	defer tx.Rollback(ctx)
	var left int
	err = tx.QueryRow(ctx, `SELECT seats_left FROM events WHERE id = $1`, req.EventID).Scan(&left)
	if errors.Is(err, pgx.ErrNoRows) {
		return Answer{}, &Refusal{Status: 404, Code: "event_not_found", Message: fmt.Sprintf("There is no event %d", req.EventID)}
	}
	if err != nil {
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
