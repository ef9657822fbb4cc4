package quiz

import "testing"

// A claim that does not match names every difference, counted in words.
func TestClaimCheckSaysEveryDifferenceInWords(t *testing.T) {
	got := Symptom{Statuses: []int{200}, Lost: 1, Intents: 1, Keys: 1, Tries: 3, Rows: 2, Seats: 1}
	err := Claim{Statuses: []int{200}, Lost: 0, Intents: 2, Keys: 2, Tries: 1, Rows: 1, Seats: 2}.Check(got)
	want := "the run does not show what the question claims: 1 answer lost, claimed 0; 1 intent, claimed 2; " +
		"1 key, claimed 2; 3 tries, claimed 1; 2 booking rows, claimed 1; 1 seat taken, claimed 2"
	if err == nil || err.Error() != want {
		t.Errorf("Check = %v\nwant %s", err, want)
	}
	if err := (Claim{Statuses: []int{200}, Tries: 3}).Check(Symptom{Statuses: []int{200}, Tries: 3}); err != nil {
		t.Errorf("Check of a matching claim = %v", err)
	}
}
