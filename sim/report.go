package sim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dustin/go-humanize/english"
)

// Report is the headless result of a run (learn demo NAME --json).
type Report struct {
	Scenario    string         `json:"scenario"`
	Variant     Variant        `json:"variant"`
	Design      Switches       `json:"design"`       // the design the run used, switch by switch
	Answers     []AnswerReport `json:"answers"`      // every answer that reached the browser, in arrival order
	Lost        int            `json:"lost"`         // answers lost on the way back
	Unanswered  int            `json:"unanswered"`   // tries that got no answer at all: lost, never sent, or the instance died
	BookingRows int            `json:"booking_rows"` // rows in bookings afterwards (the run's users only exist in its schema)
	SeatsTaken  int            `json:"seats_taken"`  // seats the run's events lost
	Attempts    []IntentReport `json:"attempts"`     // every try of every intent
	Invariants  []Invariant    `json:"invariants"`
	Guards      Guards         `json:"guards"`  // what stopped repeats in this run, read off its trace
	Verdict     *Verdict       `json:"verdict"` // what the run means: the guarantee that held, or the consequence and its diagnosis
}

// AnswerReport is one answer that reached the browser.
type AnswerReport struct {
	Status    int     `json:"status"`
	BookingID *string `json:"booking_id"` // null for an answer without a booking
	Replayed  bool    `json:"replayed"`
	Message   string  `json:"message,omitempty"` // the error message of an answer that is not 200
}

// String is the answer as a person reads it: "200 b1", "200 b1 (replay)",
// "409 Not enough seats left: 0 left, you asked for 2".
func (a AnswerReport) String() string {
	s := fmt.Sprint(a.Status)
	if a.BookingID != nil {
		s += " " + *a.BookingID
	}
	if a.Replayed {
		s += " (replay)"
	}
	if a.Message != "" {
		s += " " + a.Message
	}
	return s
}

// IntentReport is the tries of one intent.
type IntentReport struct {
	Intent int         `json:"intent"`
	Copy   int         `json:"copy,omitempty"`
	Key    string      `json:"key"`
	Tries  []TryResult `json:"tries"`
}

// Guards counts, from a run's trace, what acted on requests that repeated a
// key: a verdict names only the guards that did.
type Guards struct {
	// Lookups found the key in the booking row (then replayed, or refused
	// with 409 for another booking).
	Lookups int `json:"lookups"`
	// Violations are INSERTs the UNIQUE constraint stopped (23505), rolled
	// back, seats included.
	Violations int `json:"violations"`
	// StoreHits found the key in a key store outside the row, in the API
	// instance's memory or in Redis (RedisHits of them).
	StoreHits int `json:"store_hits"`
	RedisHits int `json:"redis_hits"`
}

// GuardsOf counts the guards that acted in trace.
func GuardsOf(trace []Event) Guards {
	var g Guards
	for _, ev := range trace {
		switch {
		case ev.Kind == KindLookup && ev.Found && strings.HasPrefix(ev.Label, labelFindKey):
			g.Lookups++
		case ev.Kind == KindRollback && ev.Label == labelUniqueViolation:
			g.Violations++
		case ev.Kind == KindKeyStore && ev.Found:
			g.StoreHits++
			if ev.To == LaneRedis {
				g.RedisHits++
			}
		}
	}
	return g
}

// Invariant is one property checked after a run, by queries of the tables
// and from the tries. The correct design keeps them all; a broken variant
// shows which one it breaks.
type Invariant struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// The invariants, by name.
const (
	InvSeatsMatchBookings  = "seats taken equal the sum of booked quantities"
	InvOnePerKey           = "at most one booking per (user, key)"
	InvSeatsNotNegative    = "seats never below zero"
	InvOneBookingPerTry    = "every try of one intent that got a booking got the same booking id"
	InvOneBookingPerIntent = "each intent booked at most once"
	InvAnswerMatches       = "every booking answered is the one the request asked for"
	InvIntentGetsItsBook   = "an intent that booked is answered with its booking"
	InvRefusalFinal        = "a refusal (4xx) is final: the browser never sends it again"
	InvKeysPerUser         = "a key never blocks another user: 409 only for the user's own key"
	InvNoAnswerRetried     = "a try that got no answer is tried again while tries are left"
)

// Passed reports whether every invariant held.
func (r *Report) Passed() bool {
	for _, inv := range r.Invariants {
		if !inv.Pass {
			return false
		}
	}
	return true
}

func (r *Run) report(ctx context.Context, outcomes []Outcome) (*Report, error) {
	rep := &Report{Scenario: r.Scenario.Name, Variant: r.Options.Variant, Design: r.Design, Answers: []AnswerReport{}, Attempts: []IntentReport{}}
	for _, ev := range r.Trace.Recorded() {
		if ev.Kind != KindAnswer {
			continue
		}
		if ev.Lost {
			rep.Lost++
			continue
		}
		a := AnswerReport{Status: ev.Status, Replayed: ev.Replayed, Message: ev.Message}
		if ev.BookingID != "" {
			id := ev.BookingID
			a.BookingID = &id
		}
		rep.Answers = append(rep.Answers, a)
	}
	sort.SliceStable(outcomes, func(i, j int) bool {
		a, b := outcomes[i].Intent, outcomes[j].Intent
		return a.Number < b.Number || (a.Number == b.Number && a.Copy < b.Copy)
	})
	for _, o := range outcomes {
		if o.Intent.Number == 0 {
			continue // an outcome that never ran
		}
		for _, t := range o.Tries {
			if t.Error != "" {
				rep.Unanswered++
			}
		}
		rep.Attempts = append(rep.Attempts, IntentReport{Intent: o.Intent.Number, Copy: o.Intent.Copy, Key: o.Intent.Key.String(), Tries: o.Tries})
	}
	inv, err := CheckInvariants(ctx, r.Stage.Admin, r.seats, outcomes, r.Trace.Recorded())
	if err != nil {
		return nil, err
	}
	rep.Invariants = inv
	rep.Guards = GuardsOf(r.Trace.Recorded())
	err = r.Stage.Admin.QueryRow(ctx, `SELECT (SELECT count(*) FROM bookings), $1 - (SELECT coalesce(sum(seats_left), 0) FROM events)`,
		r.seats).Scan(&rep.BookingRows, &rep.SeatsTaken)
	if err != nil {
		return nil, fmt.Errorf("count rows after the run: %w", err)
	}
	v := r.Scenario.Verdict(rep)
	rep.Verdict = &v
	return rep, nil
}

// CheckInvariants checks the invariants of a finished run whose events had
// seatsAtStart seats in all, by queries of db, from the outcomes and from
// the trace (the commits of new bookings, by intent).
func CheckInvariants(ctx context.Context, db Querier, seatsAtStart int, outcomes []Outcome, trace []Event) ([]Invariant, error) {
	var left, booked, minLeft, dupKeys int
	err := db.QueryRow(ctx, `SELECT
		(SELECT coalesce(sum(seats_left), 0) FROM events),
		(SELECT coalesce(sum(quantity), 0) FROM bookings),
		(SELECT coalesce(min(seats_left), 0) FROM events),
		(SELECT count(*) FROM (SELECT 1 FROM bookings GROUP BY user_id, idempotency_key HAVING count(*) > 1) d)`).
		Scan(&left, &booked, &minLeft, &dupKeys)
	if err != nil {
		return nil, fmt.Errorf("check invariants: %w", err)
	}
	taken := seatsAtStart - left
	inv := []Invariant{
		{InvSeatsMatchBookings, taken == booked, fmt.Sprintf("%d seats taken, %d booked", taken, booked)},
		{InvOnePerKey, dupKeys == 0, fmt.Sprintf("%s with more than one booking", english.Plural(dupKeys, "(user, key) pair", ""))},
		{InvSeatsNotNegative, minLeft >= 0, fmt.Sprintf("lowest seats_left %d", minLeft)},
	}
	// Every count below is of intents: the copies of one intent (sent at
	// once, with one key) are one intent, and a detail says how many of
	// its copies a count stands for when that is more than one a piece.
	made := map[int][]string{} // intent → the bookings it created
	for _, ev := range trace {
		if ev.Kind == KindCommit && !ev.Replayed && ev.BookingID != "" {
			made[ev.Intent] = append(made[ev.Intent], ev.BookingID)
		}
	}
	ids := map[int]map[string]bool{} // intent → the booking ids its tries got, over all its copies
	for _, o := range outcomes {
		for _, t := range o.Tries {
			if t.BookingID != "" {
				if ids[o.Intent.Number] == nil {
					ids[o.Intent.Number] = map[string]bool{}
				}
				ids[o.Intent.Number][t.BookingID] = true
			}
		}
	}
	split, twice := newTally(), newTally()
	for n, got := range ids {
		if len(got) > 1 {
			split.intent(n)
		}
	}
	for n, b := range made {
		if len(b) > 1 {
			twice.intent(n)
		}
	}
	inv = append(inv,
		Invariant{InvOneBookingPerTry, split.none(), split.say("intent got", "intents got", "more than one booking id")},
		Invariant{InvOneBookingPerIntent, twice.none(), twice.say("intent booked", "intents booked", "more than once")})
	mismatched := 0
	unanswered := newTally()
	for _, o := range outcomes {
		a := o.Answer
		if a != nil && a.Booking != nil && (a.Booking.EventID != o.Intent.EventID || a.Booking.Quantity != o.Intent.Quantity) {
			mismatched++
		}
		ids := made[o.Intent.Number]
		if len(ids) == 0 || a == nil {
			continue // it booked nothing, or no answer ever came
		}
		if a.Booking == nil || a.Booking.ID != ids[0] {
			unanswered.copy(o)
		}
	}
	// The answer of a try may be lost after the server acted: only a retry
	// with the key tells the user what happened (lesson, "How it works").
	abandoned := newTally()
	for _, o := range outcomes {
		if n := len(o.Tries); n > 0 && n < len(DefaultBackoff)+1 && o.Tries[n-1].Error != "" && !errors.Is(o.Err, context.Canceled) {
			abandoned.copy(o)
		}
	}
	resent, blocked := newTally(), newTally()
	for _, o := range outcomes {
		for i, t := range o.Tries {
			if t.Status >= 400 && t.Status < 500 && i < len(o.Tries)-1 {
				resent.copy(o)
				break
			}
		}
		if o.Answer != nil && o.Answer.Error != nil && o.Answer.Error.Code == CodeKeyReused && !keyUsedBy(outcomes, o) {
			blocked.copy(o)
		}
	}
	inv = append(inv,
		Invariant{InvAnswerMatches, mismatched == 0, fmt.Sprintf("%s a booking of another event or quantity", english.Plural(mismatched, "answer carries", "answers carry"))},
		Invariant{InvIntentGetsItsBook, unanswered.none(), unanswered.say("intent booked", "intents booked", "but finally answered with something else")},
		Invariant{InvRefusalFinal, resent.none(), resent.say("intent", "intents", "sent again after a 4xx")},
		Invariant{InvNoAnswerRetried, abandoned.none(), abandoned.say("intent", "intents", "given up after a try with no answer, with tries left")},
		Invariant{InvKeysPerUser, blocked.none(), blocked.say("intent got", "intents got", "409 for a key only another user had used")})
	return inv, nil
}

// tally counts intents, and the copies of them, that an invariant found
// at fault.
type tally struct {
	intents map[int]bool
	copies  int
}

func newTally() *tally { return &tally{intents: map[int]bool{}} }

// intent counts intent n as a whole.
func (t *tally) intent(n int) { t.intents[n] = true }

// copy counts the copy (or the only sending) of an intent that o is.
func (t *tally) copy(o Outcome) {
	t.intents[o.Intent.Number] = true
	t.copies++
}

func (t *tally) none() bool { return len(t.intents) == 0 }

// say is the detail: "1 intent booked more than once", "2 intents got …",
// and, when the count stands for more copies than intents, "(4 of its
// copies)" or "(9 copies in all)".
func (t *tally) say(one, many, rest string) string {
	n := len(t.intents)
	s := english.Plural(n, one, many) + " " + rest
	switch {
	case t.copies <= n:
	case n == 1:
		s += fmt.Sprintf(" (%d of its copies)", t.copies)
	default:
		s += fmt.Sprintf(" (%d copies in all)", t.copies)
	}
	return s
}

// keyUsedBy reports whether another intent of o's user sent o's key: the
// only reason the correct design answers 409 key_reused.
func keyUsedBy(outcomes []Outcome, o Outcome) bool {
	for _, other := range outcomes {
		if other.Token == o.Token && other.Intent.Key == o.Intent.Key &&
			(other.Intent.Number != o.Intent.Number || other.Intent.Copy != o.Intent.Copy) {
			return true
		}
	}
	return false
}
