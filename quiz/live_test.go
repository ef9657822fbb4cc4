package quiz

import (
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
)

func TestSymptomOf(t *testing.T) {
	id := "b1"
	rep := &sim.Report{
		Answers: []sim.AnswerReport{
			{Status: 409, Message: sim.MsgKeyReused},
			{Status: 200, BookingID: &id},
			{Status: 409, Message: sim.MsgKeyReused},
		},
		Lost:        2,
		BookingRows: 3,
		SeatsTaken:  6,
		Attempts: []sim.IntentReport{
			{Intent: 1, Key: "k1", Tries: []sim.TryResult{{Try: 1}, {Try: 2, Key: "k2"}}},
			{Intent: 2, Copy: 1, Key: "k3", Tries: []sim.TryResult{{Try: 1}}},
			{Intent: 2, Copy: 2, Key: "k3", Tries: []sim.TryResult{{Try: 1}}},
		},
		Invariants: []sim.Invariant{{Name: "a", Pass: true}, {Name: "b"}, {Name: "c"}},
	}
	got := SymptomOf(rep)
	want := Claim{
		Statuses: []int{200, 409, 409}, Messages: []string{sim.MsgKeyReused}, Lost: 2,
		Intents: 2, Keys: 3, Tries: 4, Rows: 3, Seats: 6, Broken: []string{"b", "c"},
	}
	if err := want.Check(got); err != nil {
		t.Error(err)
	}
	if s := got.String(); !strings.Contains(s, "answers 200, 409, 409") || !strings.Contains(s, "2 intents, 3 keys, 4 tries") || !strings.Contains(s, "3 booking rows, 6 seats taken") {
		t.Errorf("String() = %q", s)
	}
	// Check reports every difference.
	err := Claim{Statuses: []int{200}, Rows: 1}.Check(got)
	if err == nil || !strings.Contains(err.Error(), "statuses") || !strings.Contains(err.Error(), "3 booking rows, claimed 1") || !strings.Contains(err.Error(), "broken invariants") {
		t.Errorf("Check = %v", err)
	}
}
