package ui

import (
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
)

// copyHint is what the ? overlay of a screen that takes the mouse says
// about selecting text.
const copyHint = "hold Shift while you drag"

// A screen that takes the mouse (the play screen, the race: the wheel
// scrolls them) says in its ? overlay how to select text to copy anyway;
// a screen that leaves the mouse to the terminal does not. Before, nothing
// said that copying the SQL needs Shift+drag.
func TestMouseScreensSayHowToSelectText(t *testing.T) {
	for _, c := range []struct {
		open  common.Open
		ready string
		says  bool
	}{
		{common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, "step 1 ·", true},
		{common.Open{Place: progress.Place{Page: progress.PageRace}}, "Copies: 10", true},
		{common.Open{Place: progress.Place{Page: progress.PageHome}}, "Lesson: Idempotency", false},
	} {
		t.Run(c.ready, func(t *testing.T) {
			u := startUI(t, c.open, 100, 30)
			u.waitFor(t, c.ready)
			u.press("?")
			u.waitFor(t, "Keys", "? or esc closes")
			if got := strings.Contains(u.screen(), copyHint); got != c.says {
				t.Errorf("the overlay says %q: %v, want %v:\n%s", copyHint, got, c.says, u.screen())
			}
		})
	}
}
