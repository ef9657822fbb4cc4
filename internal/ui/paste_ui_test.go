package ui

import (
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// lineAfter reports whether screen has a line holding first and, on the
// line after it, a line holding second: two pasted lines kept apart.
func lineAfter(screen, first, second string) bool {
	lines := strings.Split(screen, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.Contains(lines[i], first) && strings.Contains(lines[i+1], second) {
			return true
		}
	}
	return false
}

// A bracketed paste (Ctrl-Shift-V, a middle click) reaches the text box
// that has the focus, its lines kept: the checkpoint's short answer and the
// drill's spoken answer. Before, the page dropped the paste message.
func TestPasteIntoTheAnswerBoxes(t *testing.T) {
	paste := tea.PasteMsg{Content: "the same key on every retry\nq is pasted, not quit"}
	t.Run("checkpoint", func(t *testing.T) {
		short := -1
		for i, q := range quiz.Checkpoint().Questions {
			if q.Kind == quiz.KindShort {
				short = i
			}
		}
		if short < 0 {
			t.Fatal("the checkpoint has no short answer")
		}
		u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: short}}, 80, 24, filepath.Join(t.TempDir(), "p.json"))
		u.waitFor(t, "tab when done")
		u.tm.Send(paste)
		u.waitFor(t, "the same key on every retry")
		u.press("tab")
		u.waitFor(t, "You wrote:")
		if s := u.screen(); !lineAfter(s, "the same key on every retry", "q is pasted, not quit") {
			t.Errorf("the pasted lines are not kept:\n%s", s)
		}
	})
	t.Run("drill", func(t *testing.T) {
		u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageDrill}}, 100, 40)
		u.waitFor(t, "Countdown: 30 s")
		u.press("enter")
		u.waitFor(t, "tab when done")
		u.tm.Send(paste)
		u.waitFor(t, "the same key on every retry")
		u.press("tab")
		u.waitFor(t, "You wrote:")
		if s := u.screen(); !lineAfter(s, "the same key on every retry", "q is pasted, not quit") {
			t.Errorf("the pasted lines are not kept:\n%s", s)
		}
	})
}

// A paste into the reader's search box searches for it (the box is one
// line: a pasted line break is a space); a paste while the box is closed
// does nothing.
func TestPasteIntoTheSearchBox(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}}, 80, 24)
	u.waitFor(t, "In 1 minute")
	u.tm.Send(tea.PasteMsg{Content: "ignored"})
	u.press("/")
	u.waitFor(t, "search this page")
	u.tm.Send(tea.PasteMsg{Content: "idempotency\nkey"})
	u.waitFor(t, "/idempotency key")
	u.press("enter")
	u.waitFor(t, "/idempotency key: match 1 of ")
}
