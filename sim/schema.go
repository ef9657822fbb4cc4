package sim

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed schema.sql
var schemaSQL string

// SchemaSQL returns the DDL of the booking engine (sim/schema.sql).
func SchemaSQL() string { return schemaSQL }

// Execer is what CreateSchema needs: a *pgx.Conn, *pgxpool.Pool or pgx.Tx.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Constraint is the uniqueness rule on the bookings' idempotency keys.
type Constraint string

// The constraints. Only UniquePerUser is the lesson's design.
const (
	// UniquePerUser is UNIQUE (user_id, idempotency_key), as sim/schema.sql has it.
	UniquePerUser Constraint = ""
	// UniqueKeyOnly is UNIQUE (idempotency_key): keys shared by all users.
	UniqueKeyOnly Constraint = "unique-key-only"
	// NoUnique has no constraint on keys at all.
	NoUnique Constraint = "no-unique"
)

// CreateSchema creates the events and bookings tables in the connection's
// current schema (the first entry of its search_path), with constraint c on
// the keys.
func CreateSchema(ctx context.Context, db Execer, c Constraint) error {
	ddl := schemaSQL
	switch c {
	case UniquePerUser:
	case UniqueKeyOnly:
		ddl += "\nALTER TABLE bookings DROP CONSTRAINT bookings_user_key, ADD CONSTRAINT bookings_key UNIQUE (idempotency_key);"
	case NoUnique:
		ddl += "\nALTER TABLE bookings DROP CONSTRAINT bookings_user_key;"
	default:
		return fmt.Errorf("unknown constraint %q", c)
	}
	if _, err := db.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("create the booking tables: %w", err)
	}
	return nil
}

// EventRow is one row of the events table.
type EventRow struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	SeatsLeft int    `json:"seats_left"`
	StartsAt  string `json:"starts_at"` // RFC 3339
}

// BookingRow is one row of the bookings table.
type BookingRow struct {
	ID        string `json:"id"` // public id, "b<n>"
	UserID    string `json:"user_id"`
	EventID   int64  `json:"event_id"`
	Quantity  int    `json:"quantity"`
	Key       string `json:"idempotency_key"`
	CreatedAt string `json:"created_at"` // RFC 3339
}

// Rows is a snapshot of both tables, committed data only, ordered by id.
type Rows struct {
	Events   []EventRow   `json:"events"`
	Bookings []BookingRow `json:"bookings"`
}

// Querier is what ReadRows needs: a *pgx.Conn, *pgxpool.Pool or pgx.Tx.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readEvent reads one event.
func readEvent(ctx context.Context, db Querier, id int64) (EventRow, bool, error) {
	var r EventRow
	rows, err := db.Query(ctx, `SELECT id, name, seats_left, starts_at FROM events WHERE id = $1`, id)
	if err != nil {
		return r, false, err
	}
	found := false
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&r.ID, &r.Name, &r.SeatsLeft, &at); err != nil {
			return r, false, err
		}
		r.StartsAt, found = at.UTC().Format(time.RFC3339Nano), true
	}
	return r, found, rows.Err()
}

// readBookings reads the bookings of one user, oldest first.
func readBookings(ctx context.Context, db Querier, user string) ([]BookingRow, error) {
	rows, err := db.Query(ctx, `SELECT id, user_id, event_id, quantity, idempotency_key::text, created_at FROM bookings WHERE user_id = $1 ORDER BY id`, user)
	if err != nil {
		return nil, err
	}
	var out []BookingRow
	for rows.Next() {
		var r BookingRow
		var id int64
		var at time.Time
		if err := rows.Scan(&id, &r.UserID, &r.EventID, &r.Quantity, &r.Key, &at); err != nil {
			return nil, err
		}
		r.ID, r.CreatedAt = PublicBookingID(id), at.UTC().Format(time.RFC3339Nano)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ReadRows reads every row of events and bookings.
func ReadRows(ctx context.Context, db Querier) (Rows, error) {
	var out Rows
	rows, err := db.Query(ctx, `SELECT id, name, seats_left, starts_at FROM events ORDER BY id`)
	if err != nil {
		return out, fmt.Errorf("read events: %w", err)
	}
	for rows.Next() {
		var r EventRow
		var at time.Time
		if err := rows.Scan(&r.ID, &r.Name, &r.SeatsLeft, &at); err != nil {
			return out, fmt.Errorf("read events: %w", err)
		}
		r.StartsAt = at.UTC().Format(time.RFC3339Nano)
		out.Events = append(out.Events, r)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("read events: %w", err)
	}
	rows, err = db.Query(ctx, `SELECT id, user_id, event_id, quantity, idempotency_key::text, created_at FROM bookings ORDER BY id`)
	if err != nil {
		return out, fmt.Errorf("read bookings: %w", err)
	}
	for rows.Next() {
		var r BookingRow
		var id int64
		var at time.Time
		if err := rows.Scan(&id, &r.UserID, &r.EventID, &r.Quantity, &r.Key, &at); err != nil {
			return out, fmt.Errorf("read bookings: %w", err)
		}
		r.ID = PublicBookingID(id)
		r.CreatedAt = at.UTC().Format(time.RFC3339Nano)
		out.Bookings = append(out.Bookings, r)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("read bookings: %w", err)
	}
	return out, nil
}
