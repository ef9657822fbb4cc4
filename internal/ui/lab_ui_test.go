package ui

import (
	"path/filepath"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// At 80x24 a learner breaks the design one switch at a time and sees which
// scenarios catch it, reads why, and plays one under the design.
func TestLabBreaksTheDesignOneSwitchAtATime(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageLab}}, 80, 24)
	u.waitFor(t, "Design lab · safe against 19 of 19 scenarios", "compare")
	u.press("j", "j", "j", "right", "right") // compare → event-quantity → none
	u.waitFor(t, "◂ none ▸", "replay whatever booking holds the key", "the design changed: enter runs it")
	u.press("enter")
	u.waitFor(t, "safe against 17 of 19 scenarios", "✗ different-quantity", "✗ key-reuse-two-events", "(compare=none)")
	u.press("tab", "j", "j")
	u.waitFor(t, "Same key, other quantity", "✗ asked for 3 seats and silently given the first booking's 2",
		"broken: every booking answered is of the event and quantity asked")
	u.press("enter")
	u.waitFor(t, "Play: Same key, other quantity · lab: compare=none", "step 1 ·")
}

// A challenge starts from its design, says what is missing, and once met
// is saved as passed.
func TestLabChallengeIsSavedWhenMet(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	u, path := startLastSeats(t)
	u.press("right", "right", "enter") // lookup → after-seat-check
	u.waitFor(t, "✓ Challenge passed: The last seats", "safe against 17 of 19 scenarios")
	p := u.finish(t, path)
	if _, ok := p.Challenges["lab/last-seats"]; !ok {
		t.Errorf("the passed challenge is not saved: %+v", p.Challenges)
	}
	if len(quiz.Challenges()) < 3 {
		t.Errorf("%d challenges", len(quiz.Challenges()))
	}
}

// 0 starts over: in a challenge, back to the challenge's own design, and
// the challenge goes on (it used to end it without a word, leaving a
// design that could no longer pass); outside one, the lesson's design.
func TestLabStartOverKeepsTheChallenge(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	u, path := startLastSeats(t)
	u.press("j", "right") // a switch the challenge does not need
	u.waitFor(t, "the design changed: enter runs it")
	u.press("0")
	u.waitFor(t, "Challenge: The last seats")
	u.press("k", "right", "right", "enter") // lookup → after-seat-check, from the challenge's design
	u.waitFor(t, "✓ Challenge passed: The last seats", "safe against 17 of 19 scenarios")
	u.press("0", "enter")
	u.waitFor(t, "Challenge: The last seats", "not yet: change exactly one switch")
	p := u.finish(t, path)
	if _, ok := p.Challenges["lab/last-seats"]; !ok {
		t.Errorf("the passed challenge is not saved: %+v", p.Challenges)
	}
}

// startLastSeats opens the lab at 80x24 with a fresh progress file at path
// and starts the challenge "The last seats".
func startLastSeats(t *testing.T) (u *uiTest, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "progress.json")
	u = startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageLab}}, 80, 24, path)
	u.waitFor(t, "safe against 19 of 19 scenarios")
	u.press("c")
	u.waitFor(t, "Challenges", "The last seats")
	u.press("enter")
	u.waitFor(t, "Challenge: The last seats", "not yet: change exactly one switch")
	return u, path
}

// A switch that another switch's value leaves nothing to decide is shown
// as not applying, and the line under the switches says why when the
// cursor is on it.
func TestLabShowsASwitchThatDoesNotApply(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageLab}}, 80, 24)
	u.waitFor(t, "Design lab · safe against 19 of 19 scenarios", "store")
	u.press("j", "j", "j", "j", "right") // store → memory
	u.waitFor(t, "after-lock (n/a)", "◂ memory ▸")
	u.press("k", "k", "k", "k") // back to lookup
	u.waitFor(t, "does not apply: store=memory: the key is looked up in the key store")
}
