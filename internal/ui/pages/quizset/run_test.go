package quizset

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// What a run is doing, beside the spinner, wraps within the width and
// every further line starts under the first word: the live question's,
// the run beside it and the prediction's alike (the prediction's and the
// beside run's started one column short of it).
func TestARunsStatusWrapsUnderItsFirstWord(t *testing.T) {
	text := "waiting for 5 PostgreSQL connections: the room's runs hold 8 of 10; it starts when they end"
	for _, w := range []int{30, 45, 80} {
		out := strings.TrimSuffix(besideSpinner("⠋", lipgloss.NewStyle(), text, w), "\n")
		lines := strings.Split(out, "\n")
		if !strings.HasPrefix(lines[0], "⠋ waiting ") {
			t.Errorf("at %d the first line is %q", w, lines[0])
		}
		var words []string
		for i, l := range lines {
			if lw := lipgloss.Width(l); lw > w {
				t.Errorf("at %d line %d is %d cells: %q", w, i+1, lw, l)
			}
			if i > 0 && (!strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "   ")) {
				t.Errorf("at %d line %d does not start under the first word:\n%s", w, i+1, out)
			}
			words = append(words, strings.Fields(l)...)
		}
		if got := strings.Join(words[1:], " "); got != text {
			t.Errorf("at %d the text is %q", w, got)
		}
		if w < 80 && len(lines) < 2 {
			t.Errorf("at %d the text did not wrap: %q", w, out)
		}
	}
}
