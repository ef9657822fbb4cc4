package quiz

import (
	"regexp"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/engine"
)

func TestSymptomOf(t *testing.T) {
	id := "b1"
	rep := &sim.Report{
		Answers: []sim.AnswerReport{
			{Status: 409, Message: engine.MsgKeyReused},
			{Status: 200, BookingID: &id},
			{Status: 409, Message: engine.MsgKeyReused},
		},
		Lost:        2,
		BookingRows: 3,
		SeatsTaken:  6,
		Attempts: []sim.IntentReport{
			{Intent: 1, Key: "k1", Tries: []client.TryResult{{Try: 1}, {Try: 2, Key: "k2"}}},
			{Intent: 2, Copy: 1, Key: "k3", Tries: []client.TryResult{{Try: 1}}},
			{Intent: 2, Copy: 2, Key: "k3", Tries: []client.TryResult{{Try: 1}}},
		},
		Invariants: []sim.Invariant{{Name: "a", Pass: true}, {Name: "b"}, {Name: "c"}},
	}
	got := SymptomOf(rep)
	want := Claim{
		Statuses: []int{200, 409, 409}, Messages: []string{engine.MsgKeyReused}, Lost: 2,
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

// words are the lower-case words of s (letters only).
func words(s string) map[string]bool {
	w := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r < 'a' || r > 'z' }) {
		w[f] = true
	}
	return w
}

// keyCount is a tally of keys, such as "2 keys".
var keyCount = regexp.MustCompile(`\b\d+ keys?\b`)

// giveaways are what evidence must not say before the learner picks the
// cause of q: the scenario's name and title; the distinctive words of the
// right cause (five letters or more, so not "each" nor "rows", and in no
// wrong option nor in the prompt, which is on screen anyway); and a tally
// of keys (how many keys a click sent is what most causes are about).
func giveaways(q Question, evidence []string) []string {
	var found []string
	all := strings.ToLower(strings.Join(evidence, "\n"))
	s, err := sim.Lookup(q.Live.Scenario)
	if err != nil {
		return []string{err.Error()}
	}
	for _, name := range []string{s.Name, s.Title} {
		if strings.Contains(all, strings.ToLower(name)) {
			found = append(found, "the scenario "+name)
		}
	}
	others := words(q.Prompt)
	for i, c := range q.Choices {
		if i != q.Correct[0] {
			for w := range words(c) {
				others[w] = true
			}
		}
	}
	shown := words(all)
	for w := range words(q.Choices[q.Correct[0]]) {
		if len(w) >= 5 && !others[w] && shown[w] {
			found = append(found, "the cause's word "+w)
		}
	}
	if k := keyCount.FindString(all); k != "" {
		found = append(found, "a tally of keys: "+k)
	}
	return found
}

// Every Break it question's evidence (its claimed numbers, which the live
// run is checked against) shows the symptom without naming the cause.
// Before, it read "Live run (new-key-per-retry, broken design): … 1 intent,
// 2 keys, 2 tries" above "The client generated a fresh key for each retry".
func TestEvidenceGivesNoCauseAway(t *testing.T) {
	for _, q := range BreakIt().Questions {
		ev := Symptom(q.Live.Claim).Evidence()
		if got := giveaways(q, ev); len(got) > 0 {
			t.Errorf("%s: the evidence gives away %q:\n%s", q.ID, got, strings.Join(ev, "\n"))
		}
		if !strings.Contains(strings.Join(ev, "\n"), "booking row") {
			t.Errorf("%s: no rows in the evidence:\n%s", q.ID, strings.Join(ev, "\n"))
		}
	}
	// The check can fail: the old text, with the scenario's name and its
	// tally of keys, is caught.
	q := BreakIt().Questions[0]
	old := []string{"Live run (" + q.Live.Scenario + ", broken design):", "answers 200 · 1 lost · 1 intent, 2 keys, 2 tries", "2 booking rows · 4 seats taken"}
	if got := giveaways(q, old); len(got) < 2 {
		t.Errorf("the old evidence passes: %q", got)
	}
	if got := giveaways(q, []string{"the client made a fresh one"}); len(got) == 0 {
		t.Error("the right cause's words pass")
	}
}
