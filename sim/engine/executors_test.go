package engine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/trace"
)

// lessonInGo is the lesson's booking transaction as a learner writes it in
// the exercises: plain Go and pgx on the Tx the engine gives, nothing of
// the engine's plans. It plugs in through Engine.Transaction, and must
// answer as the lesson's plan does.
type lessonInGo struct{}

func (lessonInGo) Book(ctx context.Context, tx Tx, req Request) (TxReport, error) {
	var seats int
	var startsAt time.Time
	err := tx.QueryRow(ctx, `SELECT seats_left, starts_at FROM events WHERE id = $1 FOR UPDATE`, req.EventID).Scan(&seats, &startsAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return TxReport{}, RefuseNoEvent(req.EventID)
	}
	if err != nil {
		return TxReport{}, err
	}
	found := Booking{Key: req.Key}
	err = tx.QueryRow(ctx, `SELECT id, user_id, event_id, quantity, created_at FROM bookings WHERE user_id = $1 AND idempotency_key = $2`,
		req.UserID, req.Key).Scan(&found.ID, &found.UserID, &found.EventID, &found.Quantity, &found.CreatedAt)
	switch {
	case err == nil:
		return TxReport{State: Existing, Booking: found}, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return TxReport{}, err
	}
	if seats < req.Quantity {
		return TxReport{}, RefuseNotEnoughSeats(seats, req.Quantity)
	}
	now := tx.Now()
	if !startsAt.After(now) {
		return TxReport{}, RefuseStarted()
	}
	if _, err := tx.Exec(ctx, `UPDATE events SET seats_left = seats_left - $2 WHERE id = $1`, req.EventID, req.Quantity); err != nil {
		return TxReport{}, err
	}
	b := Booking{UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity, Key: req.Key, CreatedAt: now}
	err = tx.QueryRow(ctx, `INSERT INTO bookings (user_id, event_id, quantity, idempotency_key, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		b.UserID, b.EventID, b.Quantity, b.Key, b.CreatedAt).Scan(&b.ID)
	if err != nil {
		return TxReport{}, err
	}
	return TxReport{State: Created, Booking: b}, nil
}

// execRequest is one request of a drawn sequence.
type execRequest struct {
	User     string
	Event    int // index into the events; len(events) is an event that does not exist
	Quantity int // 0 and MaxQuantity+1 are refused before any transaction
	KeyOf    int // the index of the request whose key this one sends; its own for a fresh key
	Later    bool
}

// execPlan is a drawn run: a design, a constraint, the events' seats (the
// second starts an hour into the run), and the requests, one after
// another, half an hour passing before each Later one.
type execPlan struct {
	Design     Design
	Constraint Constraint
	Seats      []int
	Requests   []execRequest
}

// execPlanGen draws the designs as the lab composes them: keys looked up
// by key alone exactly when the schema's constraint is on the key alone.
var execPlanGen = rapid.Custom(func(t *rapid.T) execPlan {
	p := execPlan{
		Design: Design{
			Lookup:    rapid.SampledFrom([]LookupPlace{LookupAfterLock, LookupAfterLock, LookupBeforeLock, LookupAfterSeatCheck, NoLookup}).Draw(t, "lookup"),
			NoRowLock: rapid.Bool().Draw(t, "no row lock"),
			Compare:   rapid.SampledFrom([]CompareRule{CompareAll, CompareAll, CompareEventQuantity, NoCompare}).Draw(t, "compare"),
			Isolation: rapid.SampledFrom([]IsolationLevel{ReadCommitted, ReadCommitted, RepeatableRead, Serializable}).Draw(t, "isolation"),
			InFlight:  rapid.SampledFrom([]InFlightRule{WaitForLock, Answer409}).Draw(t, "in flight"),
		},
		Constraint: rapid.SampledFrom([]Constraint{UniquePerUser, UniquePerUser, UniqueKeyOnly, NoUnique}).Draw(t, "constraint"),
		Seats:      []int{rapid.IntRange(1, 12).Draw(t, "seats 1"), rapid.IntRange(1, 12).Draw(t, "seats 2")},
	}
	p.Design.KeyAcrossUsers = p.Constraint == UniqueKeyOnly
	n := rapid.IntRange(1, 10).Draw(t, "requests")
	for i := range n {
		r := execRequest{
			User:     rapid.SampledFrom([]string{"ada", "ben"}).Draw(t, "user"),
			Event:    rapid.IntRange(0, len(p.Seats)).Draw(t, "event"),
			Quantity: rapid.IntRange(0, MaxQuantity+1).Draw(t, "quantity"),
			KeyOf:    i,
			Later:    rapid.Bool().Draw(t, "later"),
		}
		if i > 0 && rapid.Bool().Draw(t, "reuse a key") {
			r.KeyOf = rapid.IntRange(0, i-1).Draw(t, "key of")
		}
		p.Requests = append(p.Requests, r)
	}
	return p
})

// execAnswer is what one request got, as two executors must agree on it.
type execAnswer struct {
	Result  Result
	Refusal *Refusal
	Err     string
}

func (a execAnswer) String() string {
	switch {
	case a.Err != "":
		return "error " + a.Err
	case a.Refusal != nil:
		return fmt.Sprintf("%d %s %q", a.Refusal.Status, a.Refusal.Code, a.Refusal.Message)
	}
	b := a.Result.Booking
	return fmt.Sprintf("200 %s (replay %v) %s event %d × %d key %s at %s", b.PublicID(), a.Result.Replayed, b.UserID, b.EventID, b.Quantity, trace.ShortKey(b.Key), b.CreatedAt.UTC().Format(time.RFC3339Nano))
}

// executor is one way of running the booking transaction on a world.
type executor struct {
	name  string
	watch bool        // a trace attached: step by step
	own   Transaction // nil: the plan of the design
}

// executors are the ways compared: the plan step by step under a trace,
// the plan pipelined, and, for the lesson's design, the lesson written in
// Go through the seam, watched and not.
func executors(d Design) []executor {
	out := []executor{{name: "step by step", watch: true}, {name: "pipelined"}}
	if d == (Design{}) {
		out = append(out, executor{name: "in Go, watched", watch: true, own: lessonInGo{}}, executor{name: "in Go", own: lessonInGo{}})
	}
	return out
}

// runExec runs plan p with executor x on w (its tables emptied first) and
// returns every answer and the tables afterwards.
func runExec(ctx context.Context, w *world, p execPlan, x executor) ([]execAnswer, Rows, error) {
	if _, err := w.Admin.Exec(ctx, `TRUNCATE bookings, events RESTART IDENTITY`); err != nil {
		return nil, Rows{}, err
	}
	start := time.Date(2030, 5, 1, 18, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	eng := New(w.Engine.Pool(), clk, nil, trace.LaneAPI(1))
	eng.Design, eng.Transaction = p.Design, x.own
	if x.watch {
		eng.Trace = trace.New(clk, trace.Options{})
	}
	var ids []int64
	starts := []time.Time{start.Add(30 * 24 * time.Hour), start.Add(time.Hour)}
	for i, seats := range p.Seats {
		id, err := w.AddEvent(ctx, fmt.Sprintf("Event %d", i+1), seats, starts[i])
		if err != nil {
			return nil, Rows{}, err
		}
		ids = append(ids, id)
	}
	ids = append(ids, ids[len(ids)-1]+1) // no such event
	keys := make([]uuid.UUID, len(p.Requests))
	var out []execAnswer
	for i, r := range p.Requests {
		keys[i] = uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint("key ", i)))
		if r.KeyOf != i {
			keys[i] = keys[r.KeyOf]
		}
		if r.Later {
			clk.Advance(30 * time.Minute)
		}
		res, err := eng.BookTicket(ctx, Request{UserID: r.User, EventID: ids[r.Event], Quantity: r.Quantity, Key: keys[i]})
		var a execAnswer
		if refusal, ok := errors.AsType[*Refusal](err); ok {
			a.Refusal = &Refusal{Status: refusal.Status, Code: refusal.Code, Message: refusal.Message}
		} else if err != nil {
			a.Err = err.Error()
		}
		a.Result = res
		out = append(out, a)
	}
	rows, err := ReadRows(ctx, w.Admin)
	return out, rows, err
}

// Every executor of the booking transaction answers every request alike,
// and leaves the same rows and seats: the plan step by step (as the play
// screen animates it) and pipelined (as learn serve books), under every
// design of the lab and every constraint, and the lesson written in Go
// through the seam (Engine.Transaction). The requests run one after
// another, so each run is deterministic: the same booking ids, the same
// created_at, the same refusals. Races between copies are the sim
// property tests' (both executors keep the invariants there).
func TestPropertyExecutorsAnswerAlike(t *testing.T) {
	worlds := map[Constraint]*world{}
	for _, c := range []Constraint{UniquePerUser, UniqueKeyOnly, NoUnique} {
		worlds[c] = openWorld(t, worldConfig{Constraint: c})
	}
	rapid.Check(t, func(rt *rapid.T) {
		p := execPlanGen.Draw(rt, "plan")
		ctx := rt.Context()
		w := worlds[p.Constraint]
		var first executor
		var want []execAnswer
		var wantRows Rows
		for i, x := range executors(p.Design) {
			got, rows, err := runExec(ctx, w, p, x)
			if err != nil {
				rt.Fatalf("%s: %v", x.name, err)
			}
			for j, a := range got {
				if a.Err != "" {
					rt.Fatalf("%s, request %d: %s (plan %s)", x.name, j+1, a.Err, PlanFor(p.Design))
				}
			}
			if i == 0 {
				first, want, wantRows = x, got, rows
				continue
			}
			for j := range want {
				if !reflect.DeepEqual(got[j], want[j]) {
					rt.Fatalf("request %d (%+v) of plan %s:\n  %s: %s\n  %s: %s", j+1, p.Requests[j], PlanFor(p.Design), first.name, want[j], x.name, got[j])
				}
			}
			if !reflect.DeepEqual(rows, wantRows) {
				rt.Fatalf("the tables differ after plan %s:\n  %s: %+v\n  %s: %+v", PlanFor(p.Design), first.name, wantRows, x.name, rows)
			}
		}
	})
}

// The lesson's plan is what BookTicket has always sent: lock, look up,
// check, write; and its pipelined run is two round trips, BEGIN and the
// reads in the first, the writes and COMMIT in the second.
func TestTheLessonsPlan(t *testing.T) {
	p := PlanFor(Design{})
	if got, want := p.String(), "lock-event find-key check-seats check-start take-seats insert"; got != want {
		t.Errorf("the lesson's plan is %q, want %q", got, want)
	}
	var rounds []string
	for _, r := range p.rounds() {
		rounds = append(rounds, Plan{Steps: r}.String())
	}
	if got, want := strings.Join(rounds, " | "), "lock-event find-key check-seats check-start | take-seats insert"; got != want {
		t.Errorf("its round trips are %q, want %q", got, want)
	}
	// A lookup before the lock is sent on its own: the lock is not taken
	// for a key that is found, as the step-by-step run does not take it.
	var before []string
	for _, r := range PlanFor(Design{Lookup: LookupBeforeLock}).rounds() {
		before = append(before, Plan{Steps: r}.String())
	}
	if got, want := strings.Join(before, " | "), "find-key | lock-event check-seats check-start | take-seats insert"; got != want {
		t.Errorf("lookup before the lock: round trips %q, want %q", got, want)
	}
}
