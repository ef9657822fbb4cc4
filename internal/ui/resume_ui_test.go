package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
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
		u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, 80, 24, path)
		u.waitFor(t, "step 1 ")
		u.press("v")
		u.waitFor(t, "· broken")
		u.press("esc")
		u.waitFor(t, "Resume: Play · The lost answer (broken design)")
		p := u.finish(t, path)
		if p.Resume != (progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: string(sim.Broken)}) {
			t.Errorf("saved resume %+v", p.Resume)
		}
		again := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path)
		again.waitFor(t, "▸ Resume: Play · The lost answer (broken design)")
		again.press("enter")
		again.waitFor(t, "· broken")
	})
	t.Run("section moved with tab", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "progress.json")
		u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageReader, Name: "idempotency", Section: "Picture it"}}, 80, 24, path)
		u.waitFor(t, "Idempotency · Picture it")
		u.press("tab")
		u.waitFor(t, "Idempotency · How it works")
		u.press("esc")
		u.waitFor(t, "Resume: Idempotency › How it works")
		p := u.finish(t, path)
		if at := (progress.Place{Page: progress.PageReader, Name: "idempotency", Section: "How it works"}); p.Resume != at {
			t.Errorf("saved resume %+v, want %+v", p.Resume, at)
		}
	})
}

// A question answered is not asked again: Esc while its feedback shows
// leaves Resume at the next question, where the set's own entry continues
// too, and the saved spot agrees with the set's next question.
func TestResumeAfterAnAnswerIsTheNextQuestion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 1}, Exact: true}, 80, 24, path)
	u.waitFor(t, "question 2 of 5")
	q := quiz.Checkpoint().Questions[1]
	if q.Kind == quiz.KindShort {
		t.Fatalf("question 2 is a short answer: answer it by choice in this test")
	}
	answerChoice(t, u, q)
	u.waitFor(t, "Right.")
	u.press("esc")
	u.waitFor(t, "Resume: Checkpoint, question 3 of 5")
	p := u.finish(t, path)
	if at := (progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2}); p.Resume != at {
		t.Errorf("saved resume %+v, want %+v", p.Resume, at)
	}
	if sp := p.Sets[quiz.SetCheckpoint]; sp == nil || sp.Next != 2 {
		t.Errorf("saved set %+v, want next 2", sp)
	}
	again := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path)
	again.waitFor(t, "▸ Resume: Checkpoint, question 3 of 5")
	again.press("enter")
	again.waitFor(t, "Checkpoint · ", "question 3 of 5")
}

// A scenario played under a design of the lab is no place to come back
// to: the spot saved before stays, on the home screen and in the file.
func TestLabPlayKeepsTheResumeSpot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2}}, 80, 24, path)
	u.waitFor(t, "question 3 of 5")
	u.finish(t, path)
	lab := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageLab}}, 80, 24, path)
	lab.waitFor(t, "Design lab · safe against")
	lab.press("tab", "enter")
	lab.waitFor(t, "· lab: ", "step 1 ·")
	lab.press("esc")
	lab.waitFor(t, "Design lab · safe against")
	lab.press("esc")
	lab.waitFor(t, "Resume: Checkpoint, question 3 of 5")
	p := lab.finish(t, path)
	if at := (progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2}); p.Resume != at {
		t.Errorf("saved resume %+v, want %+v", p.Resume, at)
	}
}

// An attempt whose every question was answered but that was left before
// its summary (Esc on the last answer) is finished when the set is opened
// again, with its score, instead of starting over at question 1.
func TestAnsweredAttemptLeftBeforeItsSummaryIsFinished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	store := &progress.Store{Path: path}
	set := quiz.Checkpoint()
	if _, err := store.Update(func(p *progress.Progress) error {
		for _, q := range set.Questions {
			p.Record(quiz.SetCheckpoint, q.ID, 1, time.Unix(100, 0))
		}
		p.Set(quiz.SetCheckpoint).Next = len(set.Questions)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Until then the home screen says so (it said "5 answered, unfinished",
	// though nothing was left to answer).
	home := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path)
	home.waitFor(t, "all answered: enter shows the score")
	if s := home.screen(); strings.Contains(s, "answered, unfinished") {
		t.Errorf("the home screen calls the fully answered attempt unfinished:\n%s", s)
	}
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint}}, 80, 24, path)
	u.waitFor(t, "Checkpoint: done")
	p := u.finish(t, path)
	if sp := p.Sets[quiz.SetCheckpoint]; sp == nil || sp.Attempts != 1 || sp.Next != 0 || sp.Best != 1 {
		t.Errorf("saved set %+v, want the attempt finished: 1 attempt, best 1, next 0", sp)
	}
}

// A drill question graded is not asked again: Resume goes on at the next
// question (set the countdown, then enter starts it), and after the last
// one at the flashcards.
func TestResumeDrillGoesOnAfterTheGradedQuestion(t *testing.T) {
	n := len(quiz.Interview().Prompts)
	if n < 2 {
		t.Fatalf("the drill has %d questions: this test needs two", n)
	}
	path := filepath.Join(t.TempDir(), "progress.json")
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageDrill}}, 80, 24, path)
	u.waitFor(t, "Countdown: 30 s")
	u.press("enter")
	u.waitFor(t, "Question 1 of")
	u.press("tab", "space", "enter") // done, tick the first point, grade
	u.waitFor(t, "% of the key points.")
	u.press("esc")
	where := fmt.Sprintf("Resume: Interview drill, question 2 of %d", n)
	u.waitFor(t, where)
	p := u.finish(t, path)
	if want := (progress.Place{Page: progress.PageDrill, Step: 1}); p.Resume != want {
		t.Errorf("saved resume %+v, want %+v", p.Resume, want)
	}
	again := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path)
	again.waitFor(t, "▸ "+where)
	again.press("enter")
	again.waitFor(t, fmt.Sprintf("Going on at question 2 of %d", n), "Countdown: 30 s")
	again.press("enter")
	again.waitFor(t, fmt.Sprintf("Question 2 of %d", n))
	// The drill's own entry (not Resume) goes on there too, as a quiz's
	// does: opening it does not start the run over and lose the place.
	own := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageDrill}}, 80, 24, path)
	own.waitFor(t, fmt.Sprintf("Going on at question 2 of %d", n), common.Count(n-1, "question")+" to answer")
	own.press("enter")
	own.waitFor(t, fmt.Sprintf("Question 2 of %d", n))
}

// A progress file saved by the learn before the resume place was one
// Place (version 1: a scenario's variant in "section") opens where it left
// off: the home screen offers the scenario in its broken design, and
// Enter plays that.
func TestResumeFromAVersion1File(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("..", "..", "progress", "testdata", "progress-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "progress.json")
	if err := os.WriteFile(path, fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, 80, 24, path)
	u.waitFor(t, "▸ Resume: Play · The lost answer (broken design)")
	u.press("enter")
	u.waitFor(t, "· broken")
}
