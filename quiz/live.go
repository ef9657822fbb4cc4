package quiz

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dustin/go-humanize/english"

	"github.com/learn-idempotency/learn/sim"
)

// Symptom is what a run shows, as numbers the learner can reason from.
type Symptom struct {
	// Statuses are the HTTP statuses of the answers that reached the
	// browser, sorted ascending.
	Statuses []int
	// Messages are the distinct error messages of those answers, sorted.
	Messages []string
	// Lost is the number of answers lost on the way back.
	Lost int
	// Intents is the number of booking intents (a user's decisions to
	// book); Keys the number of distinct idempotency keys the browser sent;
	// Tries the number of requests it sent.
	Intents, Keys, Tries int
	// Rows is the number of rows in bookings afterwards; Seats the seats
	// the run's events lost.
	Rows, Seats int
	// Broken are the names of the invariants that failed (sim.Inv…), in the
	// order sim checks them.
	Broken []string
}

// String formats the symptom on one line, e.g.
// "answers 200; 1 lost; 1 intent, 2 keys, 2 tries; 2 booking rows, 4 seats taken".
func (s Symptom) String() string {
	var b strings.Builder
	b.WriteString("answers ")
	if len(s.Statuses) == 0 {
		b.WriteString("none")
	}
	for i, st := range s.Statuses {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, st)
	}
	for _, m := range s.Messages {
		fmt.Fprintf(&b, " (%q)", m)
	}
	fmt.Fprintf(&b, "; %d lost; %s, %s, %s; %s, %s",
		s.Lost, english.Plural(s.Intents, "intent", ""), english.Plural(s.Keys, "key", ""), english.Plural(s.Tries, "try", ""),
		english.Plural(s.Rows, "booking row", ""), english.Plural(s.Seats, "seat", "")+" taken")
	if len(s.Broken) > 0 {
		fmt.Fprintf(&b, "; broken: %s", strings.Join(s.Broken, "; "))
	}
	return b.String()
}

// Evidence is what the run shows before the learner names its cause, one
// item a line: the answers the browser got (with the server's messages),
// the answers lost on the way back, how many times the user clicked and
// how many requests went out, and what the tables hold afterwards, with the
// invariants that failed. It is what a user or an operator would see. It
// counts no keys: how many keys a click sent is the cause of most Break it
// questions, not their symptom (it is in [Symptom.String], for after the
// answer). Lines are plain text, not wrapped.
func (s Symptom) Evidence() []string {
	answers := "none"
	if len(s.Statuses) > 0 {
		st := make([]string, len(s.Statuses))
		for i, n := range s.Statuses {
			st[i] = fmt.Sprint(n)
		}
		answers = strings.Join(st, " ")
	}
	lines := []string{
		fmt.Sprintf("the browser got: %s · %d lost on the way back", answers, s.Lost),
		fmt.Sprintf("%s, %s", english.Plural(s.Intents, "click", ""), english.Plural(s.Tries, "try", "")),
		fmt.Sprintf("%s · %s", english.Plural(s.Rows, "booking row", ""), english.Plural(s.Seats, "seat", "")+" taken"),
	}
	for _, m := range s.Messages {
		lines = append(lines, "message: "+m)
	}
	if len(s.Broken) > 0 {
		lines = append(lines, "invariants broken: "+strings.Join(s.Broken, "; "))
	} else {
		lines = append(lines, "every invariant holds")
	}
	return lines
}

// SymptomOf reads the numbers of a finished run's report.
func SymptomOf(rep *sim.Report) Symptom {
	s := Symptom{Lost: rep.Lost, Rows: rep.BookingRows, Seats: rep.SeatsTaken}
	for _, a := range rep.Answers {
		s.Statuses = append(s.Statuses, a.Status)
		if a.Message != "" && !slices.Contains(s.Messages, a.Message) {
			s.Messages = append(s.Messages, a.Message)
		}
	}
	slices.Sort(s.Statuses)
	slices.Sort(s.Messages)
	keys := map[string]bool{}
	intents := map[int]bool{}
	for _, at := range rep.Attempts {
		intents[at.Intent] = true
		keys[at.Key] = true
		for _, t := range at.Tries {
			s.Tries++
			if t.Key != "" { // a client that changed the key for this try
				keys[t.Key] = true
			}
		}
	}
	s.Intents, s.Keys = len(intents), len(keys)
	for _, inv := range rep.Invariants {
		if !inv.Pass {
			s.Broken = append(s.Broken, inv.Name)
		}
	}
	return s
}
