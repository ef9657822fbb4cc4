package sim

import (
	"testing"

	"github.com/learn-idempotency/learn/sim/client"
)

// A design of the lab's own making is told in the words of the designs'
// verdicts: "for one click", not "for 1 click"; several are counted.
func TestConsequenceCountsClicksInWords(t *testing.T) {
	for _, tc := range []struct {
		rows    int
		intents []int
		want    string
	}{
		{2, []int{1, 1}, "charged more than once: 2 bookings for one click"},
		{3, []int{1, 2, 2}, "charged more than once: 3 bookings for 2 clicks"},
	} {
		r := &Report{BookingRows: tc.rows}
		for _, i := range tc.intents {
			r.Attempts = append(r.Attempts, IntentReport{Intent: i})
		}
		if got := consequenceOf(Invariant{Name: InvOneBookingPerIntent}, r); got != tc.want {
			t.Errorf("%d rows, intents %v: %q; want %q", tc.rows, tc.intents, got, tc.want)
		}
	}
}

// A run of a scenario that makes no try fail, whose tries met 5xx answers
// or no answer all the same (a backend killed under a race), says so next
// to its ✓, and counts its copies, not its answers.
func TestAVerdictSaysWhatAFaultFromOutsideDid(t *testing.T) {
	s, err := Lookup("concurrent-copies")
	if err != nil {
		t.Fatal(err)
	}
	b1 := "b1"
	r := &Report{Scenario: s.Name, Variant: Correct, BookingRows: 1, SeatsTaken: 2}
	for c := 1; c <= 3; c++ {
		tries := []client.TryResult{{Copy: c, Try: 1, Status: 200, BookingID: b1, Replayed: c > 1}}
		if c == 3 {
			tries = []client.TryResult{{Copy: c, Try: 1, Status: 503}, {Copy: c, Try: 2, Error: "EOF"}, {Copy: c, Try: 3, Status: 200, BookingID: b1, Replayed: true}}
		}
		r.Attempts = append(r.Attempts, IntentReport{Intent: 1, Copy: c, Tries: tries})
	}
	r.Invariants = []Invariant{{Name: InvOneBookingPerIntent, Pass: true}}
	v := s.Verdict(r)
	want := "3 copies, one booking, 2 seats: every copy answered with the same booking; 2 tries met a fault from outside the scenario (a 5xx or no answer) and the client retried"
	if !v.Held || v.Says != want {
		t.Errorf("verdict %q, want %q", v.Says, want)
	}
}

// A ✓ of crash-before-commit speaks of a crash only where one came: code
// that books in one statement sends no COMMIT to crash before, its first
// try is answered, and the verdict says so.
func TestACrashThatNeverCameIsNotTold(t *testing.T) {
	s, err := Lookup("crash-before-commit")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tries []client.TryResult
		want  string
	}{
		{[]client.TryResult{{Try: 1, Error: "EOF"}, {Try: 2, Status: 201, BookingID: "b1"}},
			"the crash rolled its try back (no booking stored by it), and the retry made one booking"},
		{[]client.TryResult{{Try: 1, Status: 201, BookingID: "b1"}},
			"no crash: the first try sent no COMMIT after its booking's write for the crash to come before, and was answered 201; one booking in all"},
	} {
		r := &Report{Scenario: s.Name, Variant: Correct, BookingRows: 1, SeatsTaken: 2,
			Attempts:   []IntentReport{{Intent: 1, Tries: tc.tries}},
			Invariants: []Invariant{{Name: InvOneBookingPerIntent, Pass: true}}}
		if v := s.Verdict(r); !v.Held || v.Says != tc.want {
			t.Errorf("tries %v: verdict %q, want %q", tc.tries, v.Says, tc.want)
		}
	}
}
