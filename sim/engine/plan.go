package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize/english"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Op is one step of a booking transaction's plan: a statement, or a check
// of what the statements before it read.
type Op int

// The steps a plan is made of. Each statement is written here once (see
// statements); both executors of a plan send it as it is.
const (
	// OpLockEvent reads the event's name, seats left and start and locks
	// its row (SELECT … FOR UPDATE). No such event: 404, nothing written.
	OpLockEvent Op = iota + 1
	// OpReadEvent reads the event without locking its row
	// (Design.NoRowLock). No such event: 404.
	OpReadEvent
	// OpFindKey looks up the booking of (user, key). Found: the
	// transaction ends there and reports it Existing, having written
	// nothing.
	OpFindKey
	// OpFindKeyAnyUser looks up the booking with the key, whoever booked
	// it (Design.KeyAcrossUsers). Found: Existing, as OpFindKey.
	OpFindKeyAnyUser
	// OpCheckSeats refuses, 409 not_enough_seats, when the event has fewer
	// seats left than asked. No statement.
	OpCheckSeats
	// OpCheckStart refuses, 409 event_started, when the event has started
	// on the engine's clock. No statement.
	OpCheckStart
	// OpTakeSeats decrements the event's seats (UPDATE … RETURNING).
	OpTakeSeats
	// OpInsert inserts the booking with the key (INSERT … RETURNING id):
	// the transaction reports it Created. A unique violation (23505) is
	// returned as PostgreSQL's error.
	OpInsert
	// OpClaimKey takes a transaction-level advisory lock on (user, key)
	// without waiting (Design.InFlight Answer409), unless a committed
	// booking already has the key. Taken by another transaction, and no
	// booking committed: 409 request_in_progress, nothing written. The
	// lock ends with the transaction.
	OpClaimKey
)

var opNames = map[Op]string{OpLockEvent: "lock-event", OpReadEvent: "read-event", OpFindKey: "find-key", OpFindKeyAnyUser: "find-key-any-user",
	OpCheckSeats: "check-seats", OpCheckStart: "check-start", OpTakeSeats: "take-seats", OpInsert: "insert", OpClaimKey: "claim-key"}

func (op Op) String() string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("Op(%d)", int(op))
}

// statement is the SQL of op, "" for a check.
func (op Op) statement() string { return statements[op] }

// readsEvent, findsKey, decides and writesOrLocks classify the steps for
// the executors.
func (op Op) readsEvent() bool { return op == OpLockEvent || op == OpReadEvent }
func (op Op) findsKey() bool   { return op == OpFindKey || op == OpFindKeyAnyUser }

// decides reports whether the transaction may end at op: an event that is
// missing, a key that is found, a check that refuses.
func (op Op) decides() bool {
	return op.readsEvent() || op.findsKey() || op == OpCheckSeats || op == OpCheckStart || op == OpClaimKey
}

// writesOrLocks reports whether op writes a row or takes a row lock.
func (op Op) writesOrLocks() bool {
	return op == OpLockEvent || op == OpTakeSeats || op == OpInsert || op == OpClaimKey
}

// The statements of the plans, one per step that sends one, and the
// engine's other statements.
const (
	sqlLockEvent   = `SELECT name, seats_left, starts_at FROM events WHERE id = $1 FOR UPDATE`
	sqlReadEvent   = `SELECT name, seats_left, starts_at FROM events WHERE id = $1`
	sqlFindByKey   = `SELECT id, user_id, event_id, quantity, created_at FROM bookings WHERE user_id = $1 AND idempotency_key = $2`
	sqlFindAnyUser = `SELECT id, user_id, event_id, quantity, created_at FROM bookings WHERE idempotency_key = $1`
	sqlTakeSeats   = `UPDATE events SET seats_left = seats_left - $2 WHERE id = $1 RETURNING seats_left`
	sqlInsertBooks = `INSERT INTO bookings (user_id, event_id, quantity, idempotency_key, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`
	// The key's lock, or its booking committed: the lock is one bigint
	// hashed from the user and the key, so two users' equal keys are two
	// locks (a collision of two hashes makes a request wait its turn, a
	// 409 it did not need, never a booking). A key whose booking is
	// committed needs no lock: its request goes on to find it, so the
	// retries after the first commits replay rather than meet each other.
	sqlClaimKey = `SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || ' ' || $2::uuid::text, 0))
	OR EXISTS (SELECT 1 FROM bookings WHERE user_id = $1 AND idempotency_key = $2)`
	sqlBookingByID = `SELECT id, user_id, event_id, quantity, idempotency_key, created_at FROM bookings WHERE id = $1`
)

var statements = map[Op]string{
	OpLockEvent: sqlLockEvent, OpReadEvent: sqlReadEvent, OpFindKey: sqlFindByKey, OpFindKeyAnyUser: sqlFindAnyUser,
	OpTakeSeats: sqlTakeSeats, OpInsert: sqlInsertBooks, OpClaimKey: sqlClaimKey,
}

// Plan is a booking transaction written as data: its steps, in the order
// the transaction takes them. Two executors run a plan: step by step on a
// database transaction, telling each step to the engine's trace when an
// engine runs it (Plan.Book, the Transaction a plan is), and pipelined, in
// as few round trips as the order allows, when nobody watches (see
// Engine.BookTicket). Both send the same statements in the same order and
// answer alike; the property tests hold them equal.
//
// A plan reads the event before it checks the seats or the start, and ends
// with OpTakeSeats and OpInsert; it may look the key up anywhere before
// them, or never. PlanFor gives the lesson's plan and the designs' others.
type Plan struct {
	Steps []Op
}

// PlanFor is the plan of design d's transaction. The lesson's (the zero
// Design) locks the event row, looks the key up, and only then checks the
// seats and the start, takes the seats and inserts (lesson, "How it
// works"). d.Compare is not the plan's: the service compares what the
// plan found (Engine.Compare).
func PlanFor(d Design) Plan {
	p := compiled(d).plan
	return Plan{Steps: append([]Op(nil), p.Steps...)}
}

// compiledPlan is a design's plan with its round trips, made once.
type compiledPlan struct {
	plan   Plan
	rounds [][]Op
}

// compiledPlans are the plans of every design shape (Compare aside, which
// is not the plan's), made once: an unwatched booking looks its plan up
// rather than building it.
var compiledPlans = func() map[Design]compiledPlan {
	m := map[Design]compiledPlan{}
	for _, l := range []LookupPlace{LookupAfterLock, LookupBeforeLock, LookupAfterSeatCheck, NoLookup} {
		for _, noLock := range []bool{false, true} {
			for _, across := range []bool{false, true} {
				for _, inFlight := range []InFlightRule{WaitForLock, Answer409} {
					d := Design{Lookup: l, NoRowLock: noLock, KeyAcrossUsers: across, InFlight: inFlight}
					p := planFor(d)
					m[d] = compiledPlan{plan: p, rounds: p.rounds()}
				}
			}
		}
	}
	return m
}()

// compiled is d's compiled plan; a design outside the lab's shapes is
// compiled on the spot.
func compiled(d Design) compiledPlan {
	d.Compare, d.Isolation, d.On40001 = "", "", "" // the service's, not the plan's
	if c, ok := compiledPlans[d]; ok {
		return c
	}
	p := planFor(d)
	return compiledPlan{plan: p, rounds: p.rounds()}
}

// planFor builds PlanFor's plan.
func planFor(d Design) Plan {
	event, find := OpLockEvent, OpFindKey
	if d.NoRowLock {
		event = OpReadEvent
	}
	if d.KeyAcrossUsers {
		find = OpFindKeyAnyUser
	}
	checks := []Op{OpCheckSeats, OpCheckStart}
	write := []Op{OpTakeSeats, OpInsert}
	var steps []Op
	switch d.Lookup {
	case LookupBeforeLock:
		steps = append([]Op{find, event}, checks...)
	case LookupAfterSeatCheck:
		steps = append(append([]Op{event}, checks...), find)
	case NoLookup:
		steps = append([]Op{event}, checks...)
	default: // LookupAfterLock, the lesson's
		steps = append([]Op{event, find}, checks...)
	}
	if d.InFlight == Answer409 {
		steps = append([]Op{OpClaimKey}, steps...)
	}
	return Plan{Steps: append(steps, write...)}
}

// String names the steps: "lock-event find-key check-seats …".
func (p Plan) String() string {
	names := make([]string, len(p.Steps))
	for i, op := range p.Steps {
		names[i] = op.String()
	}
	return strings.Join(names, " ")
}

// locks reports whether p locks the event row before it writes.
func (p Plan) locks() bool {
	for _, op := range p.Steps {
		if op == OpLockEvent {
			return true
		}
	}
	return false
}

// holdsAfter is the index of the step after which a request that found no
// key reaches PointAfterLookup: the key's lookup, or, in a plan that never
// looks, the event's read.
func (p Plan) holdsAfter() int {
	at := -1
	for i, op := range p.Steps {
		switch {
		case op.findsKey():
			return i
		case op.readsEvent() && at < 0:
			at = i
		}
	}
	return at
}

// rounds groups p's steps into the round trips of the pipelined executor,
// in order. A statement that writes or takes a lock opens a round of its
// own when a step before it may still end the transaction (an event that
// may be missing, a key that may be found, a check), so that nothing is
// locked or written that the step-by-step run would not lock or write;
// reads and checks join the round before. The lesson's plan is two
// rounds: BEGIN, the lock, the lookup and the checks; then the seats, the
// insert and COMMIT.
func (p Plan) rounds() [][]Op {
	var out [][]Op
	var cur []Op
	undecided := false
	for _, op := range p.Steps {
		if op.writesOrLocks() && undecided {
			out, cur, undecided = append(out, cur), nil, false
		}
		cur = append(cur, op)
		undecided = undecided || op.decides()
	}
	return append(out, cur)
}

// valid reports why p cannot book, or nil: every plan reads the event
// before it checks or writes, and ends by taking the seats and inserting.
func (p Plan) valid() error {
	n := len(p.Steps)
	if n < 3 || p.Steps[n-2] != OpTakeSeats || p.Steps[n-1] != OpInsert {
		return fmt.Errorf("plan %q does not end with take-seats and insert", p)
	}
	event := false
	for _, op := range p.Steps[:n-2] {
		switch {
		case op.readsEvent():
			event = true
		case (op == OpCheckSeats || op == OpCheckStart) && !event:
			return fmt.Errorf("plan %q checks the event before reading it", p)
		case op == OpTakeSeats || op == OpInsert:
			return fmt.Errorf("plan %q writes before its end", p)
		}
	}
	if !event {
		return fmt.Errorf("plan %q never reads the event", p)
	}
	return nil
}

// txState is what a plan's steps have read so far, for the steps after
// them: the statements' parameters and rows, the checks, the report.
type txState struct {
	plan  Plan
	req   Request
	clock interface{ Now() time.Time } // the engine's clock (a Tx, or the engine's own)
	key   any                          // the request's key as the executor sends it (newState)

	now    time.Time // read once, when a check or the insert first needs it
	nowSet bool

	eventName  string
	seatsLeft  int
	startsAt   time.Time
	seatsAfter int
	prior      Booking // the booking a lookup found
	claimed    bool    // OpClaimKey took the key's lock
	booking    Booking // the booking the insert made
}

// at is the time of the transaction on the engine's clock, to the
// microsecond PostgreSQL keeps (a replay must read back the very time the
// first answer showed), read the first time it is needed (after the
// statements before it, the row lock's wait included) and the same ever
// after: the start check and created_at agree.
func (s *txState) at() time.Time {
	if !s.nowSet {
		s.now, s.nowSet = s.clock.Now().Truncate(time.Microsecond), true
	}
	return s.now
}

// newState is the state of a transaction of plan p for req, on clock.
// binaryKey sends the key as 16 bytes in PostgreSQL's binary format (the
// pipelined executor); otherwise it goes as a uuid.UUID, which the SQL
// pane shows as text.
func newState(p Plan, req Request, clock interface{ Now() time.Time }, binaryKey bool) *txState {
	s := &txState{plan: p, req: req, clock: clock, key: req.Key}
	if binaryKey {
		s.key = pgtype.UUID{Bytes: req.Key, Valid: true}
	}
	return s
}

// args are op's parameters.
func (s *txState) args(op Op) []any {
	r := s.req
	switch op {
	case OpLockEvent, OpReadEvent:
		return []any{r.EventID}
	case OpFindKey, OpClaimKey:
		return []any{r.UserID, s.key}
	case OpFindKeyAnyUser:
		return []any{s.key}
	case OpTakeSeats:
		return []any{r.EventID, r.Quantity}
	case OpInsert:
		s.booking = Booking{UserID: r.UserID, EventID: r.EventID, Quantity: r.Quantity, Key: r.Key, CreatedAt: s.at()}
		b := s.booking
		return []any{b.UserID, b.EventID, b.Quantity, s.key, b.CreatedAt}
	}
	return nil
}

// dest is where the columns of op's first row go, appended to into (a
// caller's buffer, so that nothing is allocated for the list).
func (s *txState) dest(op Op, into []any) []any {
	switch op {
	case OpLockEvent, OpReadEvent:
		return append(into, &s.eventName, &s.seatsLeft, &s.startsAt)
	case OpFindKey, OpFindKeyAnyUser:
		// The statement does not select the key: it is the request's,
		// which it matched.
		s.prior = Booking{Key: s.req.Key}
		return append(into, &s.prior.ID, &s.prior.UserID, &s.prior.EventID, &s.prior.Quantity, &s.prior.CreatedAt)
	case OpTakeSeats:
		return append(into, &s.seatsAfter)
	case OpInsert:
		return append(into, &s.booking.ID)
	case OpClaimKey:
		return append(into, &s.claimed)
	}
	return into
}

// decide says what op's result means, row telling whether its statement
// returned a row: the transaction goes on (done false), ends with the
// booking a lookup found (done, no refusal), or is refused (a *Refusal
// whose why is the trace's words for it). A statement that must return a
// row and did not is an error.
func (s *txState) decide(op Op, row bool) (done bool, refusal *Refusal, err error) {
	r := s.req
	switch op {
	case OpLockEvent, OpReadEvent:
		if !row {
			return true, RefuseNoEvent(r.EventID).because(fmt.Sprintf("no event %d: 404, nothing written", r.EventID)), nil
		}
	case OpFindKey, OpFindKeyAnyUser:
		return row, nil, nil
	case OpClaimKey:
		if !s.claimed {
			return true, RefuseInProgress().because(fmt.Sprintf("key %s is held by another request still in its transaction: 409 %s at once, nothing written", trace.ShortKey(r.Key), CodeInProgress)), nil
		}
	case OpCheckSeats:
		if s.seatsLeft < r.Quantity {
			return true, RefuseNotEnoughSeats(s.seatsLeft, r.Quantity).because(fmt.Sprintf("%s asked, %d left: 409 %s",
				english.Plural(r.Quantity, "seat", ""), s.seatsLeft, MsgNotEnoughSeats)), nil
		}
	case OpCheckStart:
		if !s.startsAt.After(s.at()) {
			return true, RefuseStarted().because("the event has started: 409, nothing written"), nil
		}
	case OpTakeSeats:
		if !row {
			return true, nil, fmt.Errorf("take seats: event %d has no row", r.EventID)
		}
	case OpInsert:
		if !row {
			return true, nil, errors.New("insert: no booking id returned")
		}
	}
	return false, nil, nil
}

// report is what the transaction reports once every step has gone on: the
// booking it inserted.
func (s *txState) report() TxReport { return TxReport{State: Created, Booking: s.booking} }

// stepError is err of op's statement, with the step it failed at: an
// error of the statement that takes the event's row lock is a
// *RowLockError (the read FOR UPDATE; in a plan without it, the UPDATE of
// the seats, which takes the lock then), so the API can tell a lock that
// waited too long; an INSERT's error (a unique violation among them) is
// PostgreSQL's as it is.
func stepError(p Plan, op Op, req Request, err error) error {
	switch {
	case op.readsEvent():
		return &RowLockError{Step: fmt.Sprintf("read event %d", req.EventID), Err: err}
	case op == OpTakeSeats && !p.locks():
		return &RowLockError{Step: "take seats", Err: err}
	case op == OpTakeSeats:
		return fmt.Errorf("take seats: %w", err)
	case op.findsKey():
		return fmt.Errorf("look up key: %w", err)
	case op == OpClaimKey:
		return fmt.Errorf("claim key: %w", err)
	}
	return err
}
