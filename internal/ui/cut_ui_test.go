package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// cutMark is "…" where text was cut: at the end of a line, or before the
// gap to a right-hand part (the reader's position); not "SELECT … FOR".
var cutMark = regexp.MustCompile(`…( {2,}| *$)`)

// No line of these screens is cut short with "…" at the smallest size and
// at 80x24: places, explanations and numbers wrap instead. (The header is
// one line and may be cut: its whole text is on the page below it, see
// TestHeadersAreOneLine; the footer may end its hints with an honest "…":
// the ? overlay has them all.)
func TestScreensCutNothing(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	screens := []struct {
		open  common.Open
		want  string
		press []string
		then  string
	}{
		{open: common.Open{Place: progress.Place{Page: progress.PagePicker}}, want: "Scenarios"},
		{open: common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, want: "In 1 minute"},
		{open: common.Open{Place: progress.Place{Page: progress.PageReader, Name: "retry-across-instances"}}, want: "Say it in 30 seconds"},
		{open: common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint}}, want: "question 1 of 5"},
		{open: common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetBreakIt}}, want: "What causes it?"},
		{open: common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetRedraw}}, want: "enter answer"},
		{open: common.Open{Place: progress.Place{Page: progress.PageDrill}}, want: "Countdown: 30 s", press: []string{"enter"}, then: "⏱ 0:"},
	}
	for _, size := range [][2]int{{60, 20}, {80, 24}} {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%dx%d/%v/%s", size[0], size[1], sc.open.Page, sc.open.Name), func(t *testing.T) {
				u := startUI(t, sc.open, size[0], size[1])
				u.waitFor(t, sc.want)
				if len(sc.press) > 0 {
					u.press(sc.press...)
					u.waitFor(t, sc.then)
				}
				u.end(t)
				lines := strings.Split(u.m.content(), "\n")
				for i, l := range lines[:len(lines)-1] { // the footer is the last
					if i == 0 {
						continue // the header
					}
					if cutMark.MatchString(ansi.Strip(l)) {
						t.Errorf("line %d is cut: %q\n%s", i, l, strings.Join(lines, "\n"))
					}
				}
			})
		}
	}
}
