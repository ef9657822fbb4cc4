package ui

import (
	"fmt"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
)

// heldSchemas is the schemas this process holds in testDB beyond before.
func heldSchemas(before []string) []string {
	return slices.DeleteFunc(testDB.Schemas(), func(s string) bool { return slices.Contains(before, s) })
}

// Pressing r, v (play) and Enter (race) many times quickly stops each run
// before it starts the next: the screen never holds more schemas than the
// one run it shows, and after quitting no schema and no goroutine of the app
// is left.
func TestQuickPressesNeverPileUpRuns(t *testing.T) {
	// teatest's own watcher of SIGINT outlives every program by design.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"))
	before := testDB.Schemas()
	t.Run("play", func(t *testing.T) {
		u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "key-reuse-two-events"}}, 80, 24)
		u.waitFor(t, "step 1 ·")
		for range 15 {
			u.press("r", "v", "r")
		}
		u.waitFor(t, "Play: One key, two events, same instant · broken", "step 1 ·")
		waitHeld(t, u, before, 1)
		u.quit(t)
	})
	t.Run("race", func(t *testing.T) {
		u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageRace}}, 80, 24)
		u.waitFor(t, "Copies: 10")
		for range 20 {
			u.press("enter")
		}
		u.waitFor(t, "10 answers (10 of them 200)")
		waitHeld(t, u, before, 0) // a finished race holds nothing
		u.quit(t)
	})
	if held := heldSchemas(before); len(held) != 0 {
		t.Errorf("schemas left after quitting: %v", held)
	}
}

// waitHeld waits until the app's runs hold at most want schemas, and fails
// if they go on holding more once every stopped run has removed its own.
func waitHeld(t *testing.T, u *uiTest, before []string, want int) {
	t.Helper()
	u.waitUntil(t, fmt.Sprintf("at most %d schema(s) held", want), func() bool {
		return len(heldSchemas(before)) <= want && u.m.c.Runs.Active() <= max(want, 1)
	})
}
