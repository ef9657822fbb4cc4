package sim

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/engine"
)

// The lesson's client rule, judged from the tries alone: a client that
// gives up on a 5xx with tries left, or sends one intent more than 3
// times, fails; one that retried the 5xx and stopped at 3 holds.
func TestTheClientRuleIsJudged(t *testing.T) {
	key := uuid.New()
	booked := &client.Answer{Status: 201, Booking: &api.BookingJSON{ID: "b1", UserID: "ada", EventID: 7, Quantity: 2}}
	gateway := &client.Answer{Status: 502}
	row := engine.BookingRow{ID: "b1", UserID: "ada", EventID: 7, Quantity: 2, Key: key.String()}
	outcome := func(tries ...client.TryResult) Facts {
		o := client.Outcome{Intent: client.Intent{Number: 1, EventID: 7, Quantity: 2, Key: key}, Token: "ada", Tries: tries}
		if last := tries[len(tries)-1]; last.Answer != nil {
			o.Answer = last.Answer
		}
		return Facts{Outcomes: []client.Outcome{o}, Users: map[string]string{"ada": "ada"}, Bookings: []engine.BookingRow{row},
			SeatsAtStart: 10, SeatsLeft: 8, LowestSeatsLeft: 8, Unseen: Unseen{Created: true, Design: true}}
	}
	for _, tc := range []struct {
		name  string
		f     Facts
		fails string // the invariant that fails, or "" for none of the two
	}{
		{"a 502 retried, then booked", outcome(client.TryResult{Try: 1, Status: 502, Answer: gateway}, client.TryResult{Try: 2, Status: 201, BookingID: "b1", Answer: booked}), ""},
		{"a 502 not retried", outcome(client.TryResult{Try: 1, Status: 502, Answer: gateway}), InvNoAnswerRetried},
		{"no answer three times", outcome(client.TryResult{Try: 1, Error: "reset"}, client.TryResult{Try: 2, Error: "reset"}, client.TryResult{Try: 3, Error: "reset"}), ""},
		{"no answer four times", outcome(client.TryResult{Try: 1, Error: "reset"}, client.TryResult{Try: 2, Error: "reset"}, client.TryResult{Try: 3, Error: "reset"}, client.TryResult{Try: 4, Error: "reset"}), InvTriesBounded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, inv := range Judge(tc.f) {
				if inv.Name != InvNoAnswerRetried && inv.Name != InvTriesBounded {
					continue
				}
				if want := inv.Name != tc.fails; inv.Pass != want {
					t.Errorf("%s: pass %v (%s), want %v", inv.Name, inv.Pass, inv.Detail, want)
				}
			}
		})
	}
}

// A 5xx the API gave of its own is judged where the run read it (learn
// check's proxy): a retry that got the booking does not hide it; where it
// was not read (the lab), the invariant is left out, never passed.
func TestTheAPIsOwn5xxIsJudged(t *testing.T) {
	key := uuid.New()
	booked := &client.Answer{Status: 201, Booking: &api.BookingJSON{ID: "b1", UserID: "ada", EventID: 7, Quantity: 2}}
	o := client.Outcome{Intent: client.Intent{Number: 1, EventID: 7, Quantity: 2, Key: key}, Token: "ada", Answer: booked,
		Tries: []client.TryResult{{Try: 1, Status: 500, Answer: &client.Answer{Status: 500}}, {Try: 2, Status: 201, BookingID: "b1", Answer: booked}}}
	facts := func(errs map[TryRef]string) Facts {
		return Facts{Outcomes: []client.Outcome{o}, Users: map[string]string{"ada": "ada"},
			Bookings:     []engine.BookingRow{{ID: "b1", UserID: "ada", EventID: 7, Quantity: 2, Key: key.String()}},
			SeatsAtStart: 10, SeatsLeft: 8, LowestSeatsLeft: 8, Unseen: Unseen{Created: true, Design: true}, ServerErrors: errs}
	}
	find := func(f Facts) *Invariant {
		for _, inv := range Judge(f) {
			if inv.Name == InvNoServerError {
				return &inv
			}
		}
		return nil
	}
	if inv := find(facts(nil)); inv != nil {
		t.Errorf("not read, and judged: %+v", *inv)
	}
	if inv := find(facts(map[TryRef]string{})); inv == nil || !inv.Pass {
		t.Errorf("none of its own, judged %+v, want a pass", inv)
	}
	inv := find(facts(map[TryRef]string{{Intent: 1, Try: 1}: "500 duplicate key"}))
	if inv == nil || inv.Pass || inv.Detail != "1 try answered a 5xx by the API itself, the first #1.1: “500 duplicate key”" {
		t.Fatalf("a 500 of its own, judged %+v, want a fail naming it", inv)
	}
	if got := consequenceOf(*inv, &Report{}); got != "answered “500 duplicate key” by the API itself, where it should have booked, replayed or refused: a 500 is a fault of the API, even where a retry gets past it" {
		t.Errorf("its verdict says %q", got)
	}
}

// The learner's own client is judged on its waits where learn's proxy
// timed them: a retry sent before its backoff was up fails, one that
// waited passes; learn's client (no Waits) is not judged on them.
func TestAClientThatDoesNotWaitIsJudged(t *testing.T) {
	key := uuid.New()
	booked := &client.Answer{Status: 201, Booking: &api.BookingJSON{ID: "b1", UserID: "ada", EventID: 7, Quantity: 2}}
	o := client.Outcome{Intent: client.Intent{Number: 1, EventID: 7, Quantity: 2, Key: key}, Token: "ada", Answer: booked,
		Tries: []client.TryResult{{Try: 1, Error: "reset"}, {Try: 2, Status: 502}, {Try: 3, Status: 201, BookingID: "b1", Answer: booked}}}
	backoff := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}
	facts := func(waits map[TryRef]time.Duration) Facts {
		return Facts{Outcomes: []client.Outcome{o}, Users: map[string]string{"ada": "ada"},
			Bookings:     []engine.BookingRow{{ID: "b1", UserID: "ada", EventID: 7, Quantity: 2, Key: key.String()}},
			SeatsAtStart: 10, SeatsLeft: 8, LowestSeatsLeft: 8, Unseen: Unseen{Created: true, Design: true}, Waits: waits, Backoff: backoff}
	}
	find := func(f Facts) *Invariant {
		for _, inv := range Judge(f) {
			if inv.Name == InvBacksOff {
				return &inv
			}
		}
		return nil
	}
	if inv := find(facts(nil)); inv != nil {
		t.Errorf("learn's own client, judged on its waits: %+v", *inv)
	}
	waited := map[TryRef]time.Duration{{Intent: 1, Try: 2}: 104 * time.Millisecond, {Intent: 1, Try: 3}: 230 * time.Millisecond}
	if inv := find(facts(waited)); inv == nil || !inv.Pass {
		t.Errorf("every retry waited, judged %+v, want a pass", inv)
	}
	early := map[TryRef]time.Duration{{Intent: 1, Try: 2}: 104 * time.Millisecond, {Intent: 1, Try: 3}: 3 * time.Millisecond}
	inv := find(facts(early))
	if inv == nil || inv.Pass || inv.Detail != "1 retry sent early: try #1.3 sent 3ms after #1.2, where the client waits 200ms first" {
		t.Fatalf("a retry at once, judged %+v, want a fail naming it", inv)
	}
	if got := consequenceOf(*inv, &Report{}); got != "sent again too soon: try #1.3 sent 3ms after #1.2, where the client waits 200ms first (a client that does not wait turns one slow API into a retry storm)" {
		t.Errorf("its verdict says %q", got)
	}
}
