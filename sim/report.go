package sim

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dustin/go-humanize/english"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Report is the headless result of a run (learn demo NAME --json).
type Report struct {
	Scenario    string              `json:"scenario"`
	Variant     Variant             `json:"variant"`
	Design      Switches            `json:"design"`       // the design the run used, switch by switch
	NotApplying []NotApplying       `json:"not_applying"` // the design's switches that act on nothing, with why`
	Answers     []AnswerReport      `json:"answers"`      // every answer that reached the browser, in arrival order
	Lost        int                 `json:"lost"`         // answers lost on the way back
	Unanswered  int                 `json:"unanswered"`   // tries that got no answer at all: lost, never sent, or the instance died
	BookingRows int                 `json:"booking_rows"` // rows in bookings afterwards (the run's users only exist in its schema)
	Bookings    []engine.BookingRow `json:"bookings"`     // those rows, by id`
	SeatsTaken  int                 `json:"seats_taken"`  // seats the run's events lost
	Attempts    []IntentReport      `json:"attempts"`     // every try of every intent
	Invariants  []Invariant         `json:"invariants"`
	Guards      Guards              `json:"guards"`  // what stopped repeats in this run, read off its trace
	Verdict     *Verdict            `json:"verdict"` // what the run means: the guarantee that held, or the consequence and its diagnosis
	// Facts are the raw facts the invariants and the verdict were read
	// from; nil for a report read back from JSON.
	Facts *Facts `json:"-"`
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
	Intent   int                `json:"intent"`
	Copy     int                `json:"copy,omitempty"`
	User     string             `json:"user"` // who asked: the user of the intent's token
	EventID  int64              `json:"event_id"`
	Quantity int                `json:"quantity"`
	Key      string             `json:"key"`
	Tries    []client.TryResult `json:"tries"`
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
	// Reruns are booking transactions PostgreSQL failed with 40001
	// (serialization failure, at REPEATABLE READ or SERIALIZABLE) that the
	// engine rolled back and ran again in a new snapshot.
	Reruns int `json:"reruns"`
}

// GuardsOf counts the guards that acted in events, a run's trace.
func GuardsOf(events []trace.Event) Guards {
	var g Guards
	for _, ev := range events {
		switch {
		case ev.Kind == trace.KindLookup && ev.Found && strings.HasPrefix(ev.Label, engine.LabelFindKey):
			g.Lookups++
		case ev.Kind == trace.KindRollback && ev.Label == engine.LabelUniqueViolation:
			g.Violations++
		case ev.Kind == trace.KindRollback && strings.HasPrefix(ev.Label, engine.LabelSerializationRerun):
			g.Reruns++
		case ev.Kind == trace.KindKeyStore && ev.Found:
			g.StoreHits++
			if ev.To == trace.LaneRedis {
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
	Name string `json:"name"`
	Pass bool   `json:"pass"`
	// NotChecked says the run could not read a fact the invariant needs
	// (learn check of a black box): Pass is false, and the invariant did
	// not fail either. Detail says what was missing.
	NotChecked bool   `json:"not_checked,omitempty"`
	Detail     string `json:"detail"`
}

// The invariants, by name.
const (
	InvSeatsMatchBookings   = "seats taken equal the sum of booked quantities"
	InvOnePerKey            = "at most one booking per (user, key)"
	InvSeatsNotNegative     = "seats never below zero"
	InvOneBookingPerTry     = "a replay equals the first answer: every answer to one intent carries the same booking, event and quantity"
	InvOneBookingPerIntent  = "each intent booked at most once"
	InvAnswerIsOwn          = "every booking answered belongs to the user who asked"
	InvAnswerMatches        = "every booking answered is of the event and quantity asked"
	InvAnswerStored         = "every booking answered is stored"
	InvIntentGetsItsBook    = "every answer to an intent that booked carries its booking"
	InvRefusalWritesNothing = "a refused request (4xx) writes nothing"
	InvRefusalFinal         = "a refusal (a 4xx, but for 409 request_in_progress) is final: the browser never sends it again"
	InvKeysPerUser          = "a key never blocks another user: 409 (or a 5xx) only for the user's own key"
	InvNoAnswerRetried      = "a try that got no answer, a 5xx or a 409 request_in_progress is tried again while tries are left"
	InvTriesBounded         = "an intent is sent at most 3 times"
	InvBacksOff             = "a retry waits its backoff first: the client never sends again at once"
	InvNoServerError        = "the API answers every try with a booking, a refusal or 503 (try again): no other 5xx of its own"
)

// Passed reports whether every invariant was checked and held.
func (r *Report) Passed() bool {
	for _, inv := range r.Invariants {
		if !inv.Pass {
			return false
		}
	}
	return true
}

func (r *Run) report(ctx context.Context, outcomes []client.Outcome) (*Report, error) {
	rep := &Report{Scenario: r.Scenario.Name, Variant: r.Options.Variant, Design: r.Design, Answers: []AnswerReport{}, Attempts: []IntentReport{}}
	for _, ev := range r.Trace.Recorded() {
		if ev.Kind != trace.KindAnswer {
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
	rep.Attempts, rep.Unanswered = attemptsOf(outcomes, api.DemoUsers())
	facts, err := ReadFacts(ctx, r.Stage.Admin, r.seats, outcomes, r.Trace.Recorded())
	if err != nil {
		return nil, err
	}
	// A key the sweeper removed is a raw fact of the run (its log): the
	// row gets it back, marked, so the booking is still its intent's.
	for _, k := range r.Stage.Swept() {
		for i, b := range facts.Bookings {
			if b.ID == k.BookingID && b.Key == "" {
				facts.Bookings[i].Key, facts.Bookings[i].KeyExpired = k.Key, true
			}
		}
	}
	// learn's own client keeps its waits (TryResult.SentAt, on its own
	// clock): a retry sooner than the lesson's backoff is judged as the
	// exercises' clients' are.
	facts.Waits, facts.Backoff = clientWaits(outcomes), client.DefaultBackoff
	if r.Stage.cut.Load() {
		// The scenario failed the tries on purpose (an instance cut off its
		// database answers 500): the API's own 500s are not judged.
		facts.ServerErrors = nil
	}
	rep.Guards = GuardsOf(r.Trace.Recorded())
	rep.NotApplying = nonNil(r.Design.NotApplying())
	rep.judge(r.Scenario, facts)
	return rep, nil
}

// judge fills in what rep says of facts, a run of s: the invariants, the
// rows and seats, and the verdict.
func (rep *Report) judge(s *Scenario, facts Facts) {
	rep.Facts = &facts
	rep.Invariants = Judge(facts)
	rep.Bookings = nonNil(facts.Bookings)
	rep.BookingRows, rep.SeatsTaken = len(facts.Bookings), facts.SeatsAtStart-facts.SeatsLeft
	v := s.Verdict(rep)
	rep.Verdict = &v
}

// ReportOf is the report of a run of s's world whose facts were read from
// outside the API (learn check of a black box, f.Unseen saying what could
// not be read): every answer in the order of the tries, no guards (the
// engine's trace is not seen), and the verdict in s's words.
func ReportOf(s *Scenario, f Facts) *Report {
	rep := &Report{Scenario: s.Name, Answers: []AnswerReport{}}
	rep.Attempts, rep.Unanswered = attemptsOf(f.Outcomes, f.Users)
	for _, a := range rep.Attempts {
		for _, t := range a.Tries {
			if t.Error != "" {
				continue
			}
			ans := AnswerReport{Status: t.Status, Replayed: t.Replayed}
			if t.BookingID != "" {
				id := t.BookingID
				ans.BookingID = &id
			}
			if t.Answer != nil && t.Answer.Error != nil {
				ans.Message = t.Answer.Error.Message
			}
			rep.Answers = append(rep.Answers, ans)
		}
	}
	rep.judge(s, f)
	return rep
}

// attemptsOf is every try of outcomes, by intent and copy, with the user
// of each intent's token (users), and how many tries got no answer. It
// sorts outcomes by intent and copy.
func attemptsOf(outcomes []client.Outcome, users map[string]string) ([]IntentReport, int) {
	sort.SliceStable(outcomes, func(i, j int) bool {
		a, b := outcomes[i].Intent, outcomes[j].Intent
		return a.Number < b.Number || (a.Number == b.Number && a.Copy < b.Copy)
	})
	attempts, unanswered := []IntentReport{}, 0
	for _, o := range outcomes {
		if o.Intent.Number == 0 {
			continue // an outcome that never ran
		}
		for _, t := range o.Tries {
			if t.Error != "" {
				unanswered++
			}
		}
		attempts = append(attempts, IntentReport{Intent: o.Intent.Number, Copy: o.Intent.Copy, User: users[o.Token],
			EventID: o.Intent.EventID, Quantity: o.Intent.Quantity, Key: o.Intent.Key.String(), Tries: o.Tries})
	}
	return attempts, unanswered
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
func (t *tally) copy(o client.Outcome) {
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
func keyUsedBy(outcomes []client.Outcome, o client.Outcome) bool {
	for _, other := range outcomes {
		if other.Token == o.Token && other.Intent.Key == o.Intent.Key &&
			(other.Intent.Number != o.Intent.Number || other.Intent.Copy != o.Intent.Copy) {
			return true
		}
	}
	return false
}

// nonNil is s, or an empty slice for nil: JSON says [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
