package engine

import "errors"

// Design is how an engine books: the zero value is the lesson's correct
// design; each field turns on one mistake that a broken scenario variant
// shows failing.
type Design struct {
	// Lookup is where the key is looked up: right after the row lock (the
	// lesson's, the zero value), or somewhere else, or never.
	Lookup LookupPlace
	// Compare is what the engine compares between a booking found with the
	// key and the request before it replays it (lesson, "How it works",
	// step 3): the zero value compares user, event and quantity.
	Compare CompareRule
	// NoRowLock reads the event without SELECT … FOR UPDATE, so two copies
	// can both look up the key before either inserts.
	NoRowLock bool
	// KeyAcrossUsers looks the key up whoever booked it, as if keys were
	// global rather than per user; a booking of another user is a conflict.
	KeyAcrossUsers bool
	// Isolation is the isolation level the booking transaction begins at
	// (BEGIN ISOLATION LEVEL …), whatever the database's default is: the
	// zero value is READ COMMITTED, the lesson's.
	Isolation IsolationLevel
	// On40001 is what the engine does when PostgreSQL fails the booking
	// transaction with a serialization failure (SQLSTATE 40001), which
	// REPEATABLE READ and SERIALIZABLE raise where READ COMMITTED would
	// wait and read the newest row: the zero value runs the whole
	// transaction again (RetryTransaction).
	On40001 SerializationRule
	// InFlight is what a request meets when another request with its key
	// is still being booked: the zero value waits for the event's row lock
	// (the lesson's), Answer409 answers at once.
	InFlight InFlightRule
}

// InFlightRule is what the engine does with a request whose key another
// request, still in its transaction, is booking.
type InFlightRule string

// The rules. Only WaitForLock is the lesson's.
const (
	// WaitForLock lets the copy queue for the event's row lock, behind the
	// request in flight, up to the engine's bound on that wait (a lock
	// wait past it is answered 503 event_busy); once the first commits,
	// the copy's lookup finds its booking and replays it.
	WaitForLock InFlightRule = ""
	// Answer409 begins the transaction by taking a lock on the key itself
	// (pg_try_advisory_xact_lock of the user and the key, which does not
	// wait): a copy that finds it taken is answered at once 409
	// request_in_progress with Retry-After, as the IETF draft on the
	// Idempotency-Key header and Stripe answer, and holds no connection or
	// lock while the first runs. The client retries it, by its code.
	Answer409 InFlightRule = "answer-409"
)

// IsolationLevel is the isolation level of the booking transaction.
type IsolationLevel string

// The levels. Only ReadCommitted is the lesson's.
const (
	// ReadCommitted: each statement sees what was committed before it
	// began; a copy that waited for the row lock reads the row as the
	// copy before it committed it, and finds its booking.
	ReadCommitted IsolationLevel = ""
	// RepeatableRead: the transaction sees the database as it was at its
	// first statement; a copy that waited for the row lock of a row
	// changed since fails with 40001 instead.
	RepeatableRead IsolationLevel = "repeatable-read"
	// Serializable: as RepeatableRead, and PostgreSQL also fails one of
	// two transactions whose reads and writes could not have run one after
	// the other (two copies that both looked the key up and both insert).
	Serializable IsolationLevel = "serializable"
)

// SQL is the level as BEGIN names it: "READ COMMITTED".
func (l IsolationLevel) SQL() string {
	switch l {
	case RepeatableRead:
		return "REPEATABLE READ"
	case Serializable:
		return "SERIALIZABLE"
	}
	return "READ COMMITTED"
}

// SerializationRule is what the engine does with a serialization failure
// (40001): PostgreSQL's manual asks every application that runs at
// REPEATABLE READ or SERIALIZABLE to try the whole transaction again.
type SerializationRule string

// The rules. Only RetryTransaction is the lesson's.
const (
	// RetryTransaction rolls the transaction back and runs the whole of it
	// again, in a new snapshot that sees what the other transaction
	// committed, up to MaxTxTries times.
	RetryTransaction SerializationRule = ""
	// Answer503 rolls back and answers 503 serialization_failure with
	// Retry-After: nothing is stored, and the client's retry, with the same
	// key, gets the booking.
	Answer503 SerializationRule = "answer-503"
	// Answer500 takes the 40001 for an error like any other: 500.
	Answer500 SerializationRule = "answer-500"
)

// MaxTxTries is how many runs in all the engine gives a booking transaction
// that fails with 40001 (RetryTransaction: the first and up to four more)
// before it answers as Answer503.
const MaxTxTries = 5

// SerializationFailure is PostgreSQL's SQLSTATE 40001.
const SerializationFailure = "40001"

// CompareRule is what BookTicket compares between the booking that holds
// the key and the request: equal is a replay (200), different is 409
// MsgKeyReused.
type CompareRule string

// The rules. Only CompareAll is the lesson's design.
const (
	// CompareAll compares the booking's user, event and quantity with the
	// request's. Under the lesson's lookup, by user and key, the booking
	// found is always the user's; the user check matters when keys are
	// looked up by key alone (KeyAcrossUsers).
	CompareAll CompareRule = ""
	// CompareEventQuantity compares event and quantity only: under a
	// lookup by key alone, another user's booking of the same event and
	// quantity is replayed to this user (a data leak).
	CompareEventQuantity CompareRule = "event-quantity"
	// NoCompare replays whatever booking holds the key.
	NoCompare CompareRule = "none"
)

// LookupPlace is where BookTicket looks the idempotency key up in its
// transaction (lesson, "How it works", step 2).
type LookupPlace string

// The places of the lookup. Only LookupAfterLock is the lesson's design.
const (
	// LookupAfterLock looks the key up right after the event row is locked,
	// before anything else: a copy that waited for the lock finds the
	// booking the first copy committed.
	LookupAfterLock LookupPlace = ""
	// LookupBeforeLock looks the key up before the row lock: two copies can
	// both miss it, and only the UNIQUE constraint stops the second insert.
	LookupBeforeLock LookupPlace = "before-lock"
	// LookupAfterSeatCheck checks the seats before looking the key up, so a
	// retry of the last seats is refused ("Break it", row 2).
	LookupAfterSeatCheck LookupPlace = "after-seat-check"
	// NoLookup never looks the key up: every request books, unless the
	// constraint stops it.
	NoLookup LookupPlace = "none"
)

// Point names a place inside BookTicket where a scenario may hold a request
// (to force an interleaving) or make the API instance die.
type Point string

// The points, in the order BookTicket passes them.
const (
	// PointAfterLookup: the key was looked up without finding a booking
	// (where the design looks it up: after the row lock in the lesson's,
	// before it, or after the seat check; right after the lock where it never
	// looks); nothing is written yet.
	PointAfterLookup Point = "after-lookup"
	// PointBeforeCommit: the seats are taken and the booking inserted, not
	// yet committed.
	PointBeforeCommit Point = "before-commit"
	// PointAfterCommit: committed; the answer has not been sent.
	PointAfterCommit Point = "after-commit"
)

// pointWords says where a point is, for captions: "after the lookup".
var pointWords = map[Point]string{
	PointAfterLookup:  "after the lookup",
	PointBeforeCommit: "before COMMIT",
	PointAfterCommit:  "after COMMIT",
}

// ErrCrash, returned by an Engine.At hook, makes the API instance die at
// that point: its database connection is closed (PostgreSQL rolls back what
// is not committed) and the HTTP connection is cut without an answer.
var ErrCrash = errors.New("the API instance crashed")
