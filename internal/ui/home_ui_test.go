package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
)

// The home screen cuts nothing: the PostgreSQL line (cut even at 120
// columns before), the entries' titles and the description wrap; at the
// smallest size the menu scrolls and says how much more there is.
func TestHomeCutsNothing(t *testing.T) {
	titles := []string{"Lesson: Idempotency", "Interview card: How do you make a booking retry safe across API instances?",
		"Play: the lost answer", "Race: N copies of one request at once", "Scenarios: all 19, 16 with a broken design",
		"Checkpoint (5 questions)", "Break it (6 live scenarios)", "Redraw it (1 question)", "Interview drill"}
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 30}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, size[0], size[1])
			u.waitFor(t, "PostgreSQL ready in")
			u.waitUntil(t, "the whole PostgreSQL line", func() bool {
				return strings.Contains(flat(u.screen()), flat(u.m.c.DB.Describe()))
			})
			scr := u.screen()
			if strings.Contains(scr, "…") {
				t.Errorf("something is cut:\n%s", scr)
			}
			if size[1] == 20 {
				if !strings.Contains(scr, "↓ ") || !strings.Contains(scr, " more") {
					t.Errorf("the menu does not say there is more:\n%s", scr)
				}
				return
			}
			for _, title := range titles {
				if !strings.Contains(flat(scr), title) {
					t.Errorf("%q is not whole on the screen:\n%s", title, scr)
				}
			}
		})
	}
}
