package dashboard_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/ui"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/pages/dashboard"
	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// screen runs the dashboard in the app's root at w x h and replays its
// output through a virtual terminal.
type screen struct {
	tm  *teatest.TestModel
	scr *uitest.Screen
}

func start(t *testing.T, r *room.Room, w, h int) *screen {
	t.Helper()
	return startWith(t, r, w, h, nil)
}

// startWith is start with the workshop's PostgreSQL health read from
// health (nil: not watched).
func startWith(t *testing.T, r *room.Room, w, h int, health func() pgtemp.Health) *screen {
	t.Helper()
	c := &common.Common{Ctx: t.Context(), Styles: common.NewStyles(true), Keys: common.NewKeyMap(), Theme: "dark", DocStyle: "dark",
		Progress: common.OpenProgress(nil), Docs: &common.Docs{}}
	info := dashboard.Info{Join: []string{"ssh -p 2222 192.0.2.7"}, Code: "kq7m-3hxt", Budget: live.NewBudget(600, 111), Health: health}
	m := ui.NewWith(c, dashboard.New(c, r, info))
	s := &screen{scr: uitest.NewScreen(w, h)}
	s.tm = teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h), teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	stop := uitest.Follow(t, s.tm, s.scr)
	t.Cleanup(func() {
		_ = s.tm.Quit()
		s.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
		stop()
	})
	return s
}

func (s *screen) text() string { return s.scr.String() }

// waitFor waits until every want is on screen, and returns the screen.
func (s *screen) waitFor(t *testing.T, want ...string) string {
	t.Helper()
	s.scr.WaitFor(t, want...)
	return s.text()
}

func (s *screen) press(keys ...string) {
	for _, k := range keys {
		s.tm.Send(uitest.Key(k))
	}
}

// inbox is an attendee's app as the room sees it: what it was sent.
type inbox chan any

func (in inbox) next(t *testing.T) any {
	t.Helper()
	select {
	case msg := <-in:
		return msg
	case <-t.Context().Done():
		t.Fatal("the attendee's app was sent nothing")
	}
	return nil
}

func seat(t *testing.T, r *room.Room, name string, w, h int) (*room.Seat, inbox) {
	t.Helper()
	in := make(inbox, 8)
	s, err := r.Join(name, "192.0.2.9:40000", w, h, func(msg any) { in <- msg })
	if err != nil {
		t.Fatal(err)
	}
	return s, in
}

// The room at 80x24: who is where at which size, the scores, the poll of
// the question answered last with who has not answered, and how to join.
func TestDashboardShowsTheRoomAt80x24(t *testing.T) {
	r := room.New(50)
	set := quiz.Checkpoint()
	q := set.Questions[2] // a single choice
	ada, _ := seat(t, r, "ada", 120, 40)
	ada.Where("Play: The lost answer", progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: "correct"})
	ada.Answered(quiz.SetCheckpoint, q.ID, q.Correct, 1)
	ben, _ := seat(t, r, "ben", 80, 24)
	ben.Where("Checkpoint", progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2})
	s := start(t, r, 80, 24)
	s.waitFor(t, "2 of 50 connected", "ssh -p 2222 192.0.2.7", "code kq7m-3hxt",
		"PostgreSQL: the runs hold 0 of 600 connections",
		"ada", "120x40", "Play: The lost answer", "1/5 100%",
		"ben", "80x24", "Checkpoint, question 3",
		"Poll: Checkpoint 3 (answered last) · 1 answered", "not answered yet: ben")
	// The right choice's bar is full and marked.
	scr := s.text()
	right := string(rune('A'+q.Correct[0])) + " "
	found := false
	for _, l := range strings.Split(scr, "\n") {
		if strings.HasPrefix(l, right) && strings.Contains(l, "█") && strings.Contains(l, "1 ✓") {
			found = true
		}
	}
	if !found {
		t.Errorf("no full bar marked ✓ for choice %s; the screen:\n%s", right, scr)
	}

	// Someone joins, someone answers: the dashboard follows.
	seat(t, r, "cy", 100, 30)
	ben.Answered(quiz.SetCheckpoint, q.ID, []int{(q.Correct[0] + 1) % len(q.Choices)}, 0)
	s.waitFor(t, "3 of 50 connected", "cy", "100x30", "2 answered", "not answered yet: cy")

	// A terminal larger than the workshop draws at: its app's size, whole
	// in its column, marked capped.
	dee, _ := seat(t, r, "dee", 500, 200)
	dee.Resize(500, 200, true)
	scr = s.waitFor(t, "4 of 50 connected", " 500x200+  ")
	if !regexp.MustCompile(`(?m)^dee +500x200\+  +home `).MatchString(scr) {
		t.Errorf("no line for dee at 500x200+ on the home screen:\n%s", scr)
	}
}

// The presenter sends everyone to a screen, opens the poll on a question
// by sending everyone to it, and steps the play screens; q does not end
// the workshop.
func TestDashboardSendsTheRoomAndStepsIt(t *testing.T) {
	r := room.New(50)
	adaSeat, ada := seat(t, r, "ada", 80, 24)
	benSeat, ben := seat(t, r, "ben", 80, 24)
	s := start(t, r, 100, 30)
	s.waitFor(t, "2 of 50 connected")

	s.press("n") // nobody is on a play screen yet: nothing is sent
	s.waitFor(t, "nobody is on a play screen: o sends the room to one")
	if len(ada) != 0 || len(ben) != 0 || strings.Contains(s.text(), "stepped") {
		t.Errorf("a step with nobody on a play screen was sent or logged:\n%s", s.text())
	}

	s.press("o")
	s.waitFor(t, "Send everyone to:", "> Lesson: Idempotency")
	s.press("down", "down")
	s.waitFor(t, "> Play: The lost answer")
	s.press("enter")
	want := common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}
	for _, in := range []inbox{ada, ben} {
		if got := in.next(t); got != any(want) {
			t.Errorf("sent %#v, want %#v", got, want)
		}
	}
	s.waitFor(t, "sent everyone to Play: The lost answer (2 attendees)")

	// ada's app is on the play screen, ben's has moved on: the step goes
	// to ada's alone, and the feed counts her once.
	adaSeat.Where("The lost answer", progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: "correct"})
	benSeat.Where("Lesson", progress.Place{Page: progress.PageReader, Name: "idempotency"})
	s.press("n")
	if got := ada.next(t); got != any(common.Step{}) {
		t.Errorf("stepping sent %#v, want common.Step{}", got)
	}
	s.waitFor(t, "stepped the play screens together (1 attendee)")
	if len(ben) != 0 || strings.Contains(s.text(), "on one)") {
		t.Errorf("ben, off the play screens, was sent the step (%d), or the feed contradicts itself:\n%s", len(ben), s.text())
	}

	s.press("o") // the list opens where it was left: on the play screen
	s.press("down", "down")
	s.waitFor(t, "> Checkpoint 1:")
	s.press("enter")
	if got, want := ada.next(t), any(common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 0}, Exact: true}); got != want {
		t.Errorf("sent %#v, want %#v", got, want)
	}
	s.waitFor(t, "Poll: Checkpoint 1 (open) · 0 answered", "not answered yet: ada, ben")

	// c closes the poll: it says so, and an answer after does not count
	// in it.
	q := quiz.Checkpoint().Questions[0]
	adaSeat.Answered(quiz.SetCheckpoint, q.ID, q.Correct, 1)
	s.waitFor(t, "Poll: Checkpoint 1 (open) · 1 answered")
	s.press("c")
	s.waitFor(t, "Poll: Checkpoint 1 (closed) · 1 answered", "closed the poll on Checkpoint 1: 1 answered", "had not answered at the close: ben")
	benSeat.Answered(quiz.SetCheckpoint, q.ID, q.Correct, 1)
	s.waitFor(t, "ben answered Checkpoint 1: right")
	if scr := s.text(); !strings.Contains(scr, "(closed) · 1 answered") {
		t.Errorf("ben's answer after the close counted in the poll:\n%s", scr)
	}
	s.press("c")
	s.waitFor(t, "no poll to close")

	s.press("q")
	s.waitFor(t, "q does not end a workshop: Ctrl-C does")
}

// At 80 columns the footer keeps the key that ends the workshop, first;
// ? shows every key; the list of screens says how many more lie above and
// below what fits.
func TestDashboardKeysAt80x24(t *testing.T) {
	r := room.New(50)
	seat(t, r, "ada", 80, 24)
	s := start(t, r, 80, 24)
	scr := s.waitFor(t, "1 of 50 connected")
	lines := strings.Split(strings.TrimRight(scr, "\n "), "\n")
	if foot := lines[len(lines)-1]; !strings.HasPrefix(strings.TrimSpace(foot), "ctrl+c end the workshop") {
		t.Errorf("the footer at 80 columns: %q, want ctrl+c end the workshop first", foot)
	}

	s.press("?")
	s.waitFor(t, "Keys", "o", "send everyone to…", "step the play screens", "scroll the attendees", "send everyone there", "? or esc goes back to the room")
	s.press("o") // ignored while the keys show
	s.press("esc")
	s.waitFor(t, "1 of 50 connected", "ada")
	if strings.Contains(s.text(), "Send everyone to:") {
		t.Errorf("a key pressed while ? showed acted:\n%s", s.text())
	}

	s.press("o")
	scr = s.waitFor(t, "Send everyone to:", "> Lesson: Idempotency", "more below")
	if strings.Contains(scr, "more above") {
		t.Errorf("at the top of the list, something above:\n%s", scr)
	}
	s.press("up") // from the first to the last
	scr = s.waitFor(t, "more above")
	if strings.Contains(scr, "more below") || !strings.Contains(scr, "> Play:") {
		t.Errorf("at the end of the list:\n%s", scr)
	}
	s.press("up", "up", "up", "up", "up", "up", "up", "up", "up", "up")
	// Ten up from the last: the place in the list, whatever its length.
	s.waitFor(t, fmt.Sprintf("Send everyone to:  %d of %d", dashboard.TargetCount()-10, dashboard.TargetCount()), "more above", "more below")
}

// While the workshop's PostgreSQL is down, the header says so in place of
// the connections the runs hold (which stay at 0 while every run fails),
// and says when learn could not start it again.
func TestDashboardSaysWhenItsPostgresIsDown(t *testing.T) {
	var mu sync.Mutex
	h := pgtemp.Health{State: pgtemp.Up}
	set := func(n pgtemp.Health) { mu.Lock(); h = n; mu.Unlock() }
	s := startWith(t, room.New(50), 80, 24, func() pgtemp.Health { mu.Lock(); defer mu.Unlock(); return h })
	s.waitFor(t, "PostgreSQL: the runs hold 0 of 600 connections")
	set(pgtemp.Health{State: pgtemp.Restarting, PID: 42, Exit: "pid 42 was killed by signal 9"})
	s.waitFor(t, "PostgreSQL is down (pid 42 was killed by signal 9): learn is starting it")
	set(pgtemp.Health{State: pgtemp.Gone, PID: 43, Exit: "pid 43 exited with status 1"})
	scr := s.waitFor(t, "PostgreSQL is gone (pid 43 exited with status 1)")
	if strings.Contains(scr, "the runs hold") {
		t.Errorf("the header still counts connections while PostgreSQL is gone:\n%s", scr)
	}
}
