package ui

import (
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
)

// The race says, whole at 80x24, what learn forces and what is measured:
// the broken design's copies are held by learn so that they interleave;
// the tally says which guard settled the copies (the row lock queued them:
// lookups replayed against unique violations, from the report's Guards)
// and that its milliseconds are wall time.
func TestRaceSaysWhatLearnForcesAndWhichGuardActed(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageRace}}, 80, 24)
	u.waitFor(t, "Copies: 10", "press enter to fire")
	seen := func(what string, want ...string) {
		t.Helper()
		u.waitUntil(t, what, func() bool {
			s := flat(u.screen())
			for _, w := range want {
				if !strings.Contains(s, w) {
					return false
				}
			}
			return true
		})
	}
	u.press("enter")
	seen("the correct race's guards and wall time", "✓ 10 copies", "the row lock queued them: 9 lookups replayed, 0 unique violations (23505)", "ms of wall time")
	if s := flat(u.screen()); strings.Contains(s, "learn holds") {
		t.Errorf("the correct design forces no interleaving, but the race says it does:\n%s", u.screen())
	}
	u.press("v", "enter")
	seen("the broken race's forced interleaving and guards", "✗", "learn holds every copy after the lookup until all 10 are there, so they interleave every time (◔)",
		"no guard acted: 0 lookups replayed, 0 unique violations (23505)")
}
