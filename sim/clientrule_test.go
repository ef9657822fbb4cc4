package sim

import (
	"testing"

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
