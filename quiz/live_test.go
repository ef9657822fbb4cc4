package quiz

import (
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
)

// TestBreakItClaims runs every live question on the real PostgreSQL: the
// symptom run gives exactly the numbers the question claims, and the run
// shown beside it differs from it the way the question says.
func TestBreakItClaims(t *testing.T) {
	for _, q := range BreakIt().Questions {
		t.Run(q.ID, func(t *testing.T) {
			t.Parallel()
			l := q.Live
			got, rep, err := RunLive(t.Context(), testDatabase(), l.Scenario, l.Variant)
			if err != nil {
				t.Fatal(err)
			}
			if rep == nil || rep.Scenario != l.Scenario || rep.Variant != l.Variant {
				t.Fatalf("report %+v", rep)
			}
			if err := l.Claim.Check(got); err != nil {
				t.Errorf("%v\nthe run: %s", err, got)
			}
			beside, _, err := RunLive(t.Context(), testDatabase(), l.Scenario, l.Beside)
			if err != nil {
				t.Fatal(err)
			}
			switch l.Beside {
			case sim.Correct:
				// The fix: every invariant holds, and the symptom is gone.
				if len(beside.Broken) != 0 {
					t.Errorf("the correct design beside it breaks %q", beside.Broken)
				}
				if beside.Rows >= got.Rows && slices.Equal(beside.Statuses, got.Statuses) {
					t.Errorf("the correct design shows the same symptom: %s", beside)
				}
			case sim.Broken:
				// breakit/key-already-used: an engine without the comparison
				// answers 200 with a booking the request did not ask for.
				if !slices.Equal(beside.Statuses, []int{200, 200}) || !slices.Contains(beside.Broken, sim.InvAnswerMatches) {
					t.Errorf("the broken engine beside it: %s", beside)
				}
			}
		})
	}
}

func TestRunLiveErrors(t *testing.T) {
	if _, _, err := RunLive(t.Context(), testDatabase(), "no-such-scenario", sim.Broken); err == nil || !strings.Contains(err.Error(), "lost-answer") {
		t.Errorf("unknown scenario: %v (want the list of names)", err)
	}
	if _, _, err := RunLive(t.Context(), testDatabase(), "replay-after-sellout", sim.Broken); err == nil || !strings.Contains(err.Error(), "no broken variant") {
		t.Errorf("missing variant: %v", err)
	}
}

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
