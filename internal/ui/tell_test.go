package ui

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/pages/home"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/trace"
)

// A Step sent to the app moves the play screen on as n does.
func TestStepMovesThePlayScreenAsNDoes(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, 80, 24)
	u.waitFor(t, "step 1 ·", "book 2, key")
	u.tm.Send(common.Step{})
	u.waitFor(t, "step 2 ·", "BEGIN; lock event 1")
}

// listener runs the app as a workshop's session does: it hears what the
// app tells.
type listener struct {
	*Model
	told chan common.Answered
}

func (l listener) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if a, ok := msg.(common.Answered); ok {
		l.told <- a
		return l, nil
	}
	_, cmd := l.Model.Update(msg)
	return l, cmd
}

// Each graded answer is told with what the learner picked and its score:
// a short answer's points ticked, a multiple choice's options as the
// question's own indices, whatever order they were shown in.
func TestAnsweredTellsWhatWasPicked(t *testing.T) {
	told := make(chan common.Answered, 8)
	u := startUIWrapped(t, common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint}}, 100, 40, filepath.Join(t.TempDir(), "progress.json"),
		func(m *Model) tea.Model { return listener{Model: m, told: told} })
	hear := func() common.Answered {
		t.Helper()
		select {
		case a := <-told:
			return a
		case <-t.Context().Done():
			t.Fatal("nothing was told")
		}
		return common.Answered{}
	}
	set := quiz.Checkpoint()
	short, multiple := set.Questions[0], set.Questions[1]
	if short.Kind != quiz.KindShort || multiple.Kind != quiz.KindMultiple {
		t.Fatalf("the checkpoint's first questions are %s and %s; this test answers a short answer, then a multiple choice", short.Kind, multiple.Kind)
	}
	u.waitFor(t, "tab when done")
	u.tm.Type("the same effect once or twice")
	u.press("tab")
	u.waitFor(t, "The model answer:")
	u.press("space") // ticks the first point only
	u.press("enter")
	if a := hear(); a.Set != quiz.SetCheckpoint || a.Question != short.ID || !slices.Equal(a.Picks, []int{0}) || a.Score >= 1 {
		t.Errorf("after a short answer with its first point ticked: told %+v", a)
	}
	u.press("enter") // the next question
	answerChoice(t, u, multiple)
	if a := hear(); a.Question != multiple.ID || !slices.Equal(a.Picks, multiple.Correct) || a.Score != 1 {
		t.Errorf("after the right options of a multiple choice %v: told %+v", multiple.Correct, a)
	}
}

// Where names the page on top and where it stands; an app built on another
// page than home starts on it and resumes nothing.
func TestWhereIsThePageOnTop(t *testing.T) {
	c := &common.Common{Ctx: t.Context(), Styles: common.NewStyles(true), Keys: common.NewKeyMap(),
		DB: live.Existing(testDB), Progress: common.OpenProgress(nil), Docs: &common.Docs{}}
	c.Runs = live.NewRuns(t.Context(), c.DB)
	defer c.Runs.Close()
	lost, _ := sim.Lookup("lost-answer")
	m := New(c, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: lost.Name, Variant: string(sim.Broken)}})
	defer m.Close()
	title, at := m.Where()
	if want := (progress.Place{Page: progress.PagePlay, Name: lost.Name, Variant: string(sim.Broken)}); title != "Play: "+lost.Title || at != want {
		t.Errorf("Where = %q, %+v; want %q, %+v", title, at, "Play: "+lost.Title, want)
	}
	c.Progress.Get().Resume = progress.Place{Page: progress.PageDrill}
	w := NewWith(c, home.New(c))
	if title, at := w.Where(); title != "learn" || at != (progress.Place{Page: progress.PageHome}) {
		t.Errorf("NewWith(home): Where = %q, %+v; want the base page, nothing resumed", title, at)
	}
	if at := w.ResumePoint(); at != (progress.Place{Page: progress.PageDrill}) {
		t.Errorf("NewWith(home): ResumePoint = %+v; want the spot saved before, kept", at)
	}
}

// With the server's connections shared (a workshop), a race that does not
// fit says why it waits, and runs once the other learner's run is gone.
func TestRaceSaysWhyItWaitsForConnections(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PageRace}}, 100, 30)
	race, _ := sim.Lookup("concurrent-copies")
	need := race.Connections(sim.Options{})
	u.m.c.DB.SetBudget(live.NewBudget(need, need))
	other := live.NewRuns(t.Context(), u.m.c.DB)
	defer other.Close()
	held := other.Start(race, sim.Options{Trace: trace.Options{Stream: true, Gated: true}})
	<-held.Prepared()
	if err := held.Err(); err != nil {
		t.Fatal(err)
	}
	u.waitFor(t, "press enter to fire")
	u.press("enter")
	u.waitFor(t, fmt.Sprintf("waiting for %d PostgreSQL connections", need))
	held.Stop()
	u.waitFor(t, "1 row in PostgreSQL")
}

// Every page stands at the place it was opened at: opening that place
// again is the same screen (a workshop's presenter sends the room there,
// and an attendee on it is left as they are), whatever the page's title.
func TestAPageStandsWhereItWasOpened(t *testing.T) {
	c := &common.Common{Ctx: t.Context(), Styles: common.NewStyles(true), Keys: common.NewKeyMap(),
		DB: live.Existing(testDB), Progress: common.OpenProgress(nil), Docs: &common.Docs{}}
	c.Runs = live.NewRuns(t.Context(), c.DB)
	defer c.Runs.Close()
	for _, o := range []common.Open{
		{Place: progress.Place{Page: progress.PageReader, Name: "idempotency"}},
		{Place: progress.Place{Page: progress.PageReader, Name: "idempotency", Section: "Picture it"}},
		{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}},
		{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: string(sim.Broken)}},
		{Place: progress.Place{Page: progress.PagePicker}},
		{Place: progress.Place{Page: progress.PageRace}},
		{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2}, Exact: true},
		{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetBreakIt}},
		{Place: progress.Place{Page: progress.PageDrill}},
		{Place: progress.Place{Page: progress.PageLab}},
	} {
		m := New(c, o)
		if at := m.Current(); !common.SameScreen(at, o.Place) {
			title, _ := m.Where()
			t.Errorf("opened %+v, the page %q stands at %+v", o.Place, title, at)
		}
		m.Close()
	}
}
