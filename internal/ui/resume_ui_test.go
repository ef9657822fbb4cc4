package ui

import (
	"path/filepath"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// Resume reopens the place last shown, not the one a page was opened at:
// the design switched with v, the section tabbed to. The home screen says
// so as soon as Esc comes back to it, and the file says so at the next
// start.
func TestResumeFollowsWhatIsOnScreen(t *testing.T) {
	t.Run("design switched with v", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "progress.json")
		u := startUIWith(t, common.Open{Page: common.PagePlay, Name: "lost-answer"}, 80, 24, path)
		u.waitFor(t, "step 1 ")
		u.press("v")
		u.waitFor(t, "· broken")
		u.press("esc")
		u.waitFor(t, "Resume: Play · The lost answer (broken design)")
		p := u.finish(t, path)
		if p.Resume != (quiz.Resume{Screen: "play", Name: "lost-answer", Section: string(sim.Broken)}) {
			t.Errorf("saved resume %+v", p.Resume)
		}
		again := startUIWith(t, common.Open{Page: common.PageHome}, 80, 24, path)
		again.waitFor(t, "▸ Resume: Play · The lost answer (broken design)")
		again.press("enter")
		again.waitFor(t, "· broken")
	})
	t.Run("section moved with tab", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "progress.json")
		u := startUIWith(t, common.Open{Page: common.PageReader, Name: "idempotency", Section: "Picture it"}, 80, 24, path)
		u.waitFor(t, "Idempotency · Picture it")
		u.press("tab")
		u.waitFor(t, "Idempotency · How it works")
		u.press("esc")
		u.waitFor(t, "Resume: Idempotency › How it works")
		p := u.finish(t, path)
		if at := (quiz.Resume{Screen: "reader", Name: "idempotency", Section: "How it works"}); p.Resume != at {
			t.Errorf("saved resume %+v, want %+v", p.Resume, at)
		}
	})
}
