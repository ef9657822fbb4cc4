package engine

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed schema.sql
var schemaSQL string

// SchemaSQL returns the DDL of the booking engine (sim/engine/schema.sql).
func SchemaSQL() string { return schemaSQL }

// Execer is what CreateSchema needs: a *pgx.Conn, *pgxpool.Pool or pgx.Tx.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Constraint is the uniqueness rule on the bookings' idempotency keys.
type Constraint string

// The constraints. Only UniquePerUser is the lesson's design.
const (
	// UniquePerUser is UNIQUE (user_id, idempotency_key), as sim/engine/schema.sql has it.
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

// AllowKeyExpiry lets the bookings' keys be NULL, as a design whose keys
// expire needs (SweepKeys): the constraint on the key stays, and NULLs
// never meet in it.
func AllowKeyExpiry(ctx context.Context, db Execer) error {
	if _, err := db.Exec(ctx, `ALTER TABLE bookings ALTER COLUMN idempotency_key DROP NOT NULL`); err != nil {
		return fmt.Errorf("let the keys expire: %w", err)
	}
	return nil
}

// SweepSQL is the key sweeper's statement: it removes the key of every
// booking made before $1 and returns those bookings with the keys they had.
// The booking stays; a request with its key is a new request from then on.
const SweepSQL = `UPDATE bookings b SET idempotency_key = NULL
FROM (SELECT id, idempotency_key FROM bookings WHERE idempotency_key IS NOT NULL AND created_at < $1 FOR UPDATE) old
WHERE b.id = old.id
RETURNING b.id, b.user_id, old.idempotency_key::text`

// SweptKey is a key the sweeper removed from its booking.
type SweptKey struct {
	BookingID string // public id, "b<n>"
	UserID    string
	Key       string
}

// SweepKeys removes the keys of the bookings made before before
// (SweepSQL) in one statement, and returns them, oldest first.
func SweepKeys(ctx context.Context, db Querier, before time.Time) ([]SweptKey, error) {
	rows, err := db.Query(ctx, SweepSQL, before)
	if err != nil {
		return nil, fmt.Errorf("sweep the keys: %w", err)
	}
	type swept struct {
		id int64
		SweptKey
	}
	var all []swept
	var k swept
	_, err = pgx.ForEachRow(rows, []any{&k.id, &k.UserID, &k.Key}, func() error {
		k.BookingID = PublicBookingID(k.id)
		all = append(all, k)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sweep the keys: %w", err)
	}
	slices.SortFunc(all, func(a, b swept) int { return cmp.Compare(a.id, b.id) })
	out := make([]SweptKey, len(all))
	for i, a := range all {
		out[i] = a.SweptKey
	}
	return out, nil
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
	Key       string `json:"idempotency_key"` // "" once the sweeper removed it (NULL)
	CreatedAt string `json:"created_at"`      // RFC 3339
	// KeyExpired marks a row whose key the sweeper removed (a design with
	// an expiry): a run's report gives Key back from the sweeper's log,
	// as a raw fact of the run, and sets this.
	KeyExpired bool `json:"key_expired,omitempty"`
}

// MarshalJSON writes the key as null once the sweeper removed it (Key ""),
// as the table holds it.
func (b BookingRow) MarshalJSON() ([]byte, error) {
	type plain BookingRow // without this method
	var key *string
	if b.Key != "" {
		key = &b.Key
	}
	return json.Marshal(struct {
		plain
		Key *string `json:"idempotency_key"`
	}{plain(b), key})
}

// Rows is a snapshot of both tables, committed data only, ordered by id.
type Rows struct {
	Events   []EventRow   `json:"events"`
	Bookings []BookingRow `json:"bookings"`
}

// Querier is what the readers of this package need (ReadRows,
// CheckInvariants): a *pgx.Conn, *pgxpool.Pool or pgx.Tx.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// The readers' statements. Their column names are the fields of
// eventRecord and bookingRecord, which pgx matches by name.
const (
	sqlEvent        = `SELECT id, name, seats_left, starts_at FROM events WHERE id = $1`
	sqlEvents       = `SELECT id, name, seats_left, starts_at FROM events ORDER BY id`
	sqlUserBookings = `SELECT id, user_id, event_id, quantity, coalesce(idempotency_key::text, '') AS idempotency_key, created_at FROM bookings WHERE user_id = $1 ORDER BY id`
	sqlBookings     = `SELECT id, user_id, event_id, quantity, coalesce(idempotency_key::text, '') AS idempotency_key, created_at FROM bookings ORDER BY id`
)

// eventRecord is a row of events as PostgreSQL types it.
type eventRecord struct {
	ID        int64
	Name      string
	SeatsLeft int
	StartsAt  time.Time
}

// eventRow scans a row of events by column name, as the API and the UI
// show it: the time in UTC, RFC 3339.
func eventRow(row pgx.CollectableRow) (EventRow, error) {
	r, err := pgx.RowToStructByName[eventRecord](row)
	return EventRow{ID: r.ID, Name: r.Name, SeatsLeft: r.SeatsLeft, StartsAt: r.StartsAt.UTC().Format(time.RFC3339Nano)}, err
}

// bookingRecord is a row of bookings as PostgreSQL types it, the key cast
// to text.
type bookingRecord struct {
	ID        int64
	UserID    string
	EventID   int64
	Quantity  int
	Key       string `db:"idempotency_key"`
	CreatedAt time.Time
}

// bookingRow scans a row of bookings by column name, as the API and the UI
// show it: the public id "b<n>", the time in UTC, RFC 3339.
func bookingRow(row pgx.CollectableRow) (BookingRow, error) {
	r, err := pgx.RowToStructByName[bookingRecord](row)
	return BookingRow{ID: PublicBookingID(r.ID), UserID: r.UserID, EventID: r.EventID, Quantity: r.Quantity,
		Key: r.Key, CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339Nano)}, err
}

// AddEvent inserts an event named name with seats seats that starts at
// startsAt, and returns it as ReadEvent would.
func AddEvent(ctx context.Context, db Querier, name string, seats int, startsAt time.Time) (EventRow, error) {
	rows, err := db.Query(ctx, `INSERT INTO events (name, seats_left, starts_at) VALUES ($1, $2, $3) RETURNING id, name, seats_left, starts_at`,
		name, seats, startsAt)
	if err != nil {
		return EventRow{}, fmt.Errorf("add event %q: %w", name, err)
	}
	ev, err := pgx.CollectOneRow(rows, eventRow)
	if err != nil {
		return EventRow{}, fmt.Errorf("add event %q: %w", name, err)
	}
	return ev, nil
}

// ReadEvent reads event id; found is false when there is none.
func ReadEvent(ctx context.Context, db Querier, id int64) (ev EventRow, found bool, err error) {
	rows, err := db.Query(ctx, sqlEvent, id)
	if err != nil {
		return EventRow{}, false, err
	}
	ev, err = pgx.CollectOneRow(rows, eventRow)
	if errors.Is(err, pgx.ErrNoRows) {
		return EventRow{}, false, nil
	}
	return ev, err == nil, err
}

// ReadBookings reads the bookings of one user, oldest first; nil when
// there are none.
func ReadBookings(ctx context.Context, db Querier, user string) ([]BookingRow, error) {
	rows, err := db.Query(ctx, sqlUserBookings, user)
	if err != nil {
		return nil, err
	}
	return pgx.AppendRows([]BookingRow(nil), rows, bookingRow)
}

// ReadRows reads every row of events and bookings, ordered by id; a table
// without rows gives a nil slice. On an error, what was read before it is
// returned with it.
func ReadRows(ctx context.Context, db Querier) (Rows, error) {
	var out Rows
	rows, err := db.Query(ctx, sqlEvents)
	if err == nil {
		out.Events, err = pgx.AppendRows(out.Events, rows, eventRow)
	}
	if err != nil {
		return out, fmt.Errorf("read events: %w", err)
	}
	rows, err = db.Query(ctx, sqlBookings)
	if err == nil {
		out.Bookings, err = pgx.AppendRows(out.Bookings, rows, bookingRow)
	}
	if err != nil {
		return out, fmt.Errorf("read bookings: %w", err)
	}
	return out, nil
}
