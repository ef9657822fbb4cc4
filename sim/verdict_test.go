package sim

import "testing"

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
