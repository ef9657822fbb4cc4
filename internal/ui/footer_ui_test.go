package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/footer"
	"github.com/learn-idempotency/learn/quiz"
)

// The footer never runs past the window and keeps `? help`, `esc back` and
// `q quit` down to 60 columns; every hint on it is whole, and when some are
// left out it says so with "…". Seen before: at 69 columns on the play
// screen and 60 to 62 on the reader the last hint was cut mid-way with no
// "…"; at 80, `? help`, `esc` and `q` were lost.
func TestFootersKeepTheirEssentials(t *testing.T) {
	screens := []struct {
		open common.Open
		want string
		back bool
	}{
		{common.Open{Page: common.PageHome}, "Lesson: Idempotency", false},
		{common.Open{Page: common.PageReader, Name: "idempotency"}, "In 1 minute", true},
		{common.Open{Page: common.PagePicker}, "Scenarios", true},
		{common.Open{Page: common.PagePlay, Name: "lost-answer"}, "step 1 ·", true},
		{common.Open{Page: common.PageRace}, "Copies: 10", true},
		{common.Open{Page: common.PageQuiz, Name: quiz.SetRedraw}, "6. ", true},
		{common.Open{Page: common.PageDrill}, "Countdown: 30 s", true},
	}
	for _, w := range []int{60, 61, 62, 69, 80} {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%d/%v", w, sc.open.Page), func(t *testing.T) {
				u := startUI(t, sc.open, w, 24)
				want := []string{sc.want, "? help", "q quit"}
				if sc.back {
					want = append(want, "esc back")
				}
				u.waitFor(t, want...)
				lines := strings.Split(u.screen(), "\n")
				foot := strings.TrimRight(lines[23], " ")
				u.end(t) // the model is the test's to read from here on
				if got := ansi.StringWidth(foot); got > w {
					t.Errorf("the footer is %d wide: %q", got, foot)
				}
				k := u.m.c.Keys
				known := []string{}
				for _, b := range append(u.m.top().page.KeyMap().ShortHelp(), k.Help, k.Quit) {
					if h := b.Help().Key + " " + b.Help().Desc; b.Enabled() && !slices.Contains(known, h) {
						known = append(known, h)
					}
				}
				hints := strings.Split(foot, footer.Separator)
				for _, h := range hints {
					if h != footer.Ellipsis && !slices.Contains(known, h) {
						t.Errorf("hint %q is not one of the page's %q", h, known)
					}
				}
				if shown := len(hints) - strings.Count(foot, footer.Ellipsis); shown < len(known) && !strings.Contains(foot, footer.Ellipsis) {
					t.Errorf("%d hints of %d shown without a …: %q", shown, len(known), foot)
				}
			})
		}
	}
}
