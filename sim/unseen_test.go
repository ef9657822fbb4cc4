package sim

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/engine"
)

// lostThenReplayed is the outcome of a lost answer and its retry, as a
// black box answers it: the booking's id only, no user, event or
// quantity.
func lostThenReplayed(key uuid.UUID, id string) client.Outcome {
	in := client.Intent{Number: 1, EventID: 7, Quantity: 2, Key: key}
	ans := &client.Answer{Status: 201, Booking: &api.BookingJSON{ID: id}}
	return client.Outcome{Intent: in, Token: "ada", Answer: ans, Tries: []client.TryResult{
		{Try: 1, Error: "connection reset"},
		{Try: 2, Status: 201, BookingID: id, Answer: ans},
	}}
}

// A run whose bookings and seats could not be read is never ✓: what
// needs them is "not checked", the verdict says which facts were
// missing, and nothing is counted as failed.
func TestWhatWasNotSeenIsNotChecked(t *testing.T) {
	s, err := Lookup("lost-answer")
	if err != nil {
		t.Fatal(err)
	}
	f := Facts{Outcomes: []client.Outcome{lostThenReplayed(uuid.New(), "b1")}, Users: map[string]string{"ada": "ada"},
		Unseen: Unseen{Rows: true, Seats: true, Created: true, Design: true}}
	invs := Judge(f)
	var notChecked []string
	for _, inv := range invs {
		if inv.NotChecked {
			if inv.Pass {
				t.Errorf("%s: not checked and passed", inv.Name)
			}
			notChecked = append(notChecked, inv.Name)
		}
	}
	want := []string{InvSeatsMatchBookings, InvOnePerKey, InvSeatsNotNegative, InvOneBookingPerIntent,
		InvAnswerIsOwn, InvAnswerMatches, InvAnswerStored, InvIntentGetsItsBook, InvRefusalWritesNothing}
	if !slices.Equal(notChecked, want) {
		t.Errorf("not checked: %q\nwant %q", notChecked, want)
	}
	r := &Report{Scenario: s.Name, Invariants: invs, Facts: &f}
	v := s.Verdict(r)
	if v.Held || len(v.Failed) != 0 || len(v.NotChecked) != len(want) {
		t.Errorf("verdict held %v, %d failed, %d not checked; want not held, 0 failed, %d not checked", v.Held, len(v.Failed), len(v.NotChecked), len(want))
	}
	if w := "not checked: the bookings, the seats, whose booking an answer carries, and the event and quantity of a booking answered could not be read"; v.Says != w {
		t.Errorf("says %q\nwant %q", v.Says, w)
	}
}

// With the rows read, a black box's answer is judged by the stored row:
// another user's booking is a leak even when the answer does not say
// whose it is, and a failure under an unknown design is told by its
// consequence, never as a bug in learn's correct design.
func TestABlackBoxIsJudgedByItsRows(t *testing.T) {
	s, err := Lookup("two-users-same-key")
	if err != nil {
		t.Fatal(err)
	}
	key := uuid.New()
	ada := lostThenReplayed(key, "b1")
	ben := lostThenReplayed(key, "b1")
	ben.Token, ben.Intent.Number = "ben", 2
	f := Facts{Outcomes: []client.Outcome{ada, ben}, Users: map[string]string{"ada": "ada", "ben": "ben"},
		Bookings:     []engine.BookingRow{{ID: "b1", UserID: "ada", EventID: 7, Quantity: 2, Key: key.String()}},
		SeatsAtStart: 10, SeatsLeft: 8, LowestSeatsLeft: 8, Unseen: Unseen{Created: true, Design: true}}
	r := &Report{Scenario: s.Name, Invariants: Judge(f), Facts: &f, BookingRows: 1, SeatsTaken: 2}
	v := s.Verdict(r)
	if v.Held || len(v.Failed) == 0 || v.Failed[0].Name == "" {
		t.Fatalf("verdict %+v; want the leak failed", v)
	}
	if w := "shown another user's booking, a data leak: ben got ada's booking b1"; v.Says != w {
		t.Errorf("says %q\nwant %q", v.Says, w)
	}
}

// A 409 or 422 from an API that is not learn's, for a key only another
// user sent, is the key blocking that user, whatever its code; a refusal
// for seats is not.
func TestAForeignRefusalForAnotherUsersKeyIsCounted(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		want   bool
	}{
		{409, "", true}, {422, "idempotency_conflict", true}, {409, engine.CodeKeyReused, true},
		{409, engine.CodeNotEnoughSeats, false}, {400, "", false},
	} {
		got := keyRefusal(&client.Answer{Status: tc.status, Error: &api.Error{Status: tc.status, Code: tc.code}})
		if got != tc.want {
			t.Errorf("%d %q: key refusal %v, want %v", tc.status, tc.code, got, tc.want)
		}
	}
}
