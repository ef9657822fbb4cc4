package common

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A header is one line of at most w cells; the right part stays whole and
// at the right edge; what is cut ends in "…".
func TestHeaderIsOneLine(t *testing.T) {
	st := NewStyles(false)
	tests := []struct {
		title, rest, right string
		w                  int
		want               string
	}{
		{"Play: Lost answer", " · broken", "step 1 · paused", 60, "Play: Lost answer · broken" + strings.Repeat(" ", 19) + "step 1 · paused"},
		{"Can a retry reach another of the API instances?", " · Say it in 30 seconds", "0%", 60,
			"Can a retry reach another of the API instances? · Say it… 0%"},
		{"Can a retry reach another of the API instances?", " · Say it in 30 seconds", "0%", 80,
			"Can a retry reach another of the API instances? · Say it in 30 seconds" + strings.Repeat(" ", 8) + "0%"},
		{"A title far too long for the window it is drawn in", "", "", 20, "A title far too lon…"},
		{"Race", "", "a right part wider than the window", 10, "a right p…"},
	}
	for _, tt := range tests {
		got := ansi.Strip(Header(st, tt.title, tt.rest, tt.right, tt.w))
		if strings.Contains(got, "\n") || ansi.StringWidth(got) > tt.w {
			t.Errorf("Header(%q, %d) = %q: not one line of at most %d cells", tt.title, tt.w, got, tt.w)
		}
		if got != tt.want {
			t.Errorf("Header(%q, %q, %q, %d) =\n%q, want\n%q", tt.title, tt.rest, tt.right, tt.w, got, tt.want)
		}
	}
}
