package lab

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/sim"
)

// scored is the lab after a run of a design that changes every switch it
// can (the longest scorecard header there is) and breaks every other
// scenario, with the consequence each ✗ row must show.
func scored(t *testing.T, c *common.Common, focus focus, row int) *Model {
	t.Helper()
	m := New(c)
	for _, sw := range m.switches {
		d, err := m.design.With(sw.Name, sw.Values[len(sw.Values)-1])
		if err != nil {
			t.Fatal(err)
		}
		m.design = d
	}
	m.ran = m.design
	var results []sim.LabResult
	for i, s := range sim.Scenarios() {
		r := sim.LabResult{Scenario: s.Name, Title: s.Title, Pass: i%2 == 0, Consequence: "one booking, and the retry got it back"}
		if !r.Pass {
			r.Consequence = fmt.Sprintf("charged twice in %s: 2 bookings for one click", s.Name)
			r.Failed = []string{"at most one booking per (user, key)"}
		}
		m.results[s.Name] = r
		results = append(results, r)
	}
	card := sim.Score(m.ran, results)
	m.card, m.focus, m.row = &card, focus, row
	return m
}

// The lab fits its room at the smallest size and at 80x24, wherever the
// scorecard's cursor is; the scorecard's header shows the whole design,
// wrapped; and each ✗ row on screen says what the user suffers, without
// Tab. Seen before: at 80 columns the header was cut ("(lookup=after-seat-
// check con") and a ✗ row showed only the scenario's name.
func TestScorecardSaysWhatTheUserSuffers(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		for _, f := range []focus{onSwitches, onScorecard} {
			for _, row := range []int{0, 7, len(sim.Scenarios()) - 1} {
				c := &common.Common{Width: size[0], Height: size[1], Styles: common.NewStyles(true), Keys: common.NewKeyMap()}
				m := scored(t, c, f, row)
				view := m.View()
				lines := strings.Split(ansi.Strip(view), "\n")
				where := fmt.Sprintf("%dx%d focus %d row %d", size[0], size[1], f, row)
				if len(lines) > c.Body() {
					t.Errorf("%s: %d lines for %d:\n%s", where, len(lines), c.Body(), strings.Join(lines, "\n"))
				}
				for i, l := range strings.Split(view, "\n") {
					if lipgloss.Width(l) > size[0] {
						t.Errorf("%s: line %d is %d wide", where, i, lipgloss.Width(l))
					}
				}
				// The scorecard is the right column, from leftW+1 on, or the
				// whole width when the window is narrow and it has the focus.
				leftW := max(34, min(44, size[0]/2))
				if m.narrow() {
					if f != onScorecard {
						continue
					}
					leftW = -1
				}
				var col []string
				for _, l := range lines {
					col = append(col, strings.TrimSpace(ansi.Cut(l, leftW+1, size[0])))
				}
				text := strings.Join(col, " ")
				if !strings.Contains(text, "("+m.ran.String()+")") {
					t.Errorf("%s: the scorecard's header does not have the whole design %q:\n%s", where, m.ran.String(), strings.Join(col, "\n"))
				}
				shown := 0
				for i, l := range col {
					name, ok := strings.CutPrefix(strings.TrimLeft(l, "▸ "), "✗ ")
					if _, err := sim.Lookup(name); !ok || err != nil {
						continue // not a row: the detail below says ✗ too
					}
					shown++
					if i+1 >= len(col) || !strings.HasPrefix(col[i+1], "charged twice") {
						t.Errorf("%s: the ✗ row %q does not say what the user suffers:\n%s", where, name, strings.Join(col, "\n"))
					}
				}
				if shown == 0 {
					t.Errorf("%s: no ✗ row on screen:\n%s", where, strings.Join(col, "\n"))
				}
				if row == len(sim.Scenarios())-1 && f == onScorecard && !strings.Contains(text, sim.Scenarios()[row].Name) {
					t.Errorf("%s: the row under the cursor is not on screen:\n%s", where, strings.Join(col, "\n"))
				}
			}
		}
	}
}
