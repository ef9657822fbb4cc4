package lessons

import (
	"regexp"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim/engine"
)

// sentenceOf matches one sentence of page prose: no full stop inside it
// (the pages write "e.g." nowhere, and code spans hold no ". ").
const sentenceOf = `[^.]*`

// howItWorksStep returns step n of the lesson's How it works, the list item
// that begins "n. ", as one line of Markdown.
func howItWorksStep(t *testing.T, n int) string {
	t.Helper()
	s, ok := mustGet(t, "idempotency").Section("How it works")
	if !ok {
		t.Fatal("the lesson has no How it works")
	}
	prefix := string(rune('0'+n)) + ". "
	for _, l := range strings.Split(s.Markdown, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("How it works has no step %d", n)
	return ""
}

// Step 4 of How it works says what the engine answers in each case the
// constraint settles: BookTicket reads the winner after a unique violation
// (readWinner) and compares it with the request (compare), so one key sent
// for two events is another booking, 409 with MsgKeyReused, while a copy
// of one request that looked before the lock replays the winner's booking
// with 200. It also says, in one sentence, that this refines the page learn
// is drawn from (where the constraint decides every race), and why: copies
// of one event queue on the row lock and never reach the constraint.
func TestStepFourSaysWhatTheEngineAnswers(t *testing.T) {
	step := howItWorksStep(t, 4)
	checks := []struct{ what, pattern string }{
		{"two events: 409 with the engine's message, in one sentence",
			`two (different )?events` + sentenceOf + `409 Conflict, “` + regexp.QuoteMeta(engine.MsgKeyReused) + `”`},
		{"two events: the scenario that shows it", "`learn play key-reuse-two-events`"},
		{"lookup before the lock: 200 with the winner's booking, in one sentence",
			`before (taking )?the lock` + sentenceOf + `winner's booking with 200`},
		{"lookup before the lock: the scenario that shows it", "`learn play lookup-before-lock`"},
		{"the refinement and why, in one sentence",
			`refines the MiniTickets lesson` + sentenceOf + `because` + sentenceOf + `never reach the constraint`},
		{"what learn measured: 9 lookups, 0 unique violations", `9 lookups` + sentenceOf + `0 unique violations`},
	}
	for _, c := range checks {
		if !regexp.MustCompile(c.pattern).MatchString(step) {
			t.Errorf("step 4 does not say %s (no match for %s):\n%s", c.what, c.pattern, step)
		}
	}
	// Only the lookup-before-lock case answers with the winner's booking:
	// no sentence that names two events says so.
	for _, s := range regexp.MustCompile(`[^.]+`).FindAllString(step, -1) {
		if regexp.MustCompile(`two (different )?events`).MatchString(s) && strings.Contains(s, "answers with") {
			t.Errorf("step 4 says one key for two events is answered with a booking: %q", s)
		}
	}
}

// The interview card's deeper answer says the same as the engine for one
// key on two events: after the rollback the winner's booking is read, and
// since it is for the other event, the answer is 409.
func TestCardAnswersTwoEventsWith409(t *testing.T) {
	s, ok := mustGet(t, "retry-across-instances").Section("The deeper answer")
	if !ok {
		t.Fatal("the card has no deeper answer")
	}
	const pattern = `reads the booking the winner committed` + sentenceOf + `other event` + sentenceOf + `409 Conflict`
	if !regexp.MustCompile(pattern).MatchString(s.Markdown) {
		t.Errorf("the deeper answer does not say 409 for two events (no match for %s):\n%s", pattern, s.Markdown)
	}
}
