package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/footer"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// The footer never runs past the window and keeps `? help`, `esc back` and
// `q quit` down to 60 columns, and before them the keys each screen is for
// (keys); every hint on it is whole, and when some are left out it says so
// with "…". Seen before: at 69 columns on the play screen and 60 to 62 on
// the reader the last hint was cut mid-way with no "…"; at 80, `? help`,
// `esc` and `q` were lost; at 60x20 the drill's tick screen kept `↑/k up`
// and `↓/j down` and dropped `space tick` and `enter grade`.
func TestFootersKeepTheirEssentials(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	screens := []struct {
		open  common.Open
		want  string
		press []string
		then  string
		back  bool
		keys  []string
	}{
		{open: common.Open{Place: progress.Place{Page: progress.PageHome}}, want: "Lesson: Idempotency", keys: []string{"enter open"}},
		{open: common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, want: "In 1 minute", back: true, keys: []string{"tab next section"}},
		{open: common.Open{Place: progress.Place{Page: progress.PagePicker}}, want: "Scenarios", back: true, keys: []string{"enter play"}},
		{open: common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, want: "step 1 ·", back: true, keys: []string{"space play/pause", "n step"}},
		{open: common.Open{Place: progress.Place{Page: progress.PageRace}}, want: "Copies: 10", back: true, keys: []string{"enter fire"}},
		{open: common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetRedraw}}, want: "6. ", back: true, keys: []string{"enter answer"}},
		{open: common.Open{Place: progress.Place{Page: progress.PageDrill}}, want: "Countdown: 30 s", back: true, keys: []string{"enter start"}},
		{open: common.Open{Place: progress.Place{Page: progress.PageDrill}}, want: "Countdown: 30 s", press: []string{"enter", "tab"}, then: "Tick the points",
			back: true, keys: []string{"space tick", "enter grade"}},
		{open: common.Open{Place: progress.Place{Page: progress.PageLab}}, want: "safe against 19 of 19", back: true, keys: []string{"←/→ change", "enter run all"}},
		{open: common.Open{Place: progress.Place{Page: progress.PageLab}}, want: "safe against 19 of 19", press: []string{"tab"}, then: "enter play it",
			back: true, keys: []string{"enter play it"}},
	}
	for _, w := range []int{60, 61, 62, 69, 80} {
		h := 24
		if w == 60 {
			h = 20
		}
		for i, sc := range screens {
			t.Run(fmt.Sprintf("%dx%d/%d/%v", w, h, i, sc.open.Page), func(t *testing.T) {
				t.Parallel()
				u := startUI(t, sc.open, w, h)
				want := []string{sc.want, "? help", "q quit"}
				if sc.back {
					want = append(want, "esc back")
				}
				u.waitFor(t, want...)
				if len(sc.press) > 0 {
					u.press(sc.press...)
					u.waitFor(t, sc.then)
				}
				lines := strings.Split(u.screen(), "\n")
				foot := strings.TrimRight(lines[h-1], " ")
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
				for _, k := range sc.keys {
					if !slices.Contains(hints, k) {
						t.Errorf("the screen's key %q is not in its footer: %q", k, foot)
					}
				}
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
