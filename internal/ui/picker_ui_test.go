package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
)

// flat is s with every run of spaces and line breaks made one space: text
// that the window wrapped reads as it was written.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// cursorLine is the line of screen with the cursor (▸) on it.
func cursorLine(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "▸") {
			return l
		}
	}
	return ""
}

// The picker shows the whole title and explanation of the scenario under
// the cursor, in the variant chosen for it, at every size down to the
// smallest; the chosen variant is in brackets, readable without colour.
// Before, every explanation was cut with "…" at 80 and 120 columns and
// shown nowhere else.
func TestPickerShowsEachExplanationWhole(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 30}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePicker}}, size[0], size[1])
			scenarios := sim.Scenarios()
			for i, s := range scenarios {
				if i > 0 {
					u.press("down")
				}
				head := s.Title + " · correct design "
				if !s.HasBroken() {
					head = s.Title + " · correct design (it has no broken variant) "
				}
				u.waitUntil(t, s.Title+", correct design, whole", func() bool {
					return strings.Contains(flat(u.screen()), flat(head+s.Summary))
				})
				if !s.HasBroken() {
					continue
				}
				u.press("v")
				u.waitUntil(t, s.Title+", broken design, whole", func() bool {
					scr := u.screen()
					return strings.Contains(flat(scr), flat(s.Title+" · broken design "+s.Broken)) && strings.Contains(cursorLine(scr), "[broken]")
				})
			}
		})
	}
}
