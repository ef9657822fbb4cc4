package writeit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/check"
)

// screen is the exercises' screen at w x h, its module present, fed no
// check: the test sends the check's messages itself.
func screen(t *testing.T, w, h int) *Model {
	t.Helper()
	c := &common.Common{Ctx: context.Background(), Width: w, Height: h, Styles: common.NewStyles(true), Keys: common.NewKeyMap()}
	m := New(c, t.TempDir())
	m.present = true
	return m
}

// A check that stopped at the build says so on its status line, and not
// the pass count of a check that did not run: the count there is the last
// check's that ran, said as such.
func TestABuildThatFailedSaysNothingWasChecked(t *testing.T) {
	m := screen(t, 80, 24)
	m.rep, m.checked = &exercises.Report{Passed: 1, Current: exercises.Ladder[1].ID, Took: "2s", Exercises: make([]exercises.Status, len(exercises.Ladder))}, time.Now()
	m.running, m.phase = true, "building"
	stopped := &exercises.Report{Stopped: "./booking.go:4:2: undefined: undefinedThing", Current: exercises.Ladder[0].ID, Took: "380ms", Exercises: make([]exercises.Status, len(exercises.Ladder))}
	m.Update(doneMsg{run: m.run, rep: stopped})
	lines := strings.Split(m.screenText(), "\n")
	status := strings.Join(strings.Fields(strings.Join(lines[1:3], " ")), " ") // wrapped on two lines at 80
	if !strings.Contains(status, "your module did not build, so nothing was checked") || strings.Contains(status, "0 of 8 passed") {
		t.Errorf("the status line of a build that failed: %q, want it to say nothing was checked, and no 0 of 8 passed", status)
	}
	if strings.Contains(status, "passed") && !strings.Contains(status, "the last check that ran: 1 of 8 passed") {
		t.Errorf("the status line gives a pass count not said to be the last check's that ran: %q", status)
	}
	if body := strings.Join(lines[2:], "\n"); !strings.Contains(body, "undefined: undefinedThing") {
		t.Errorf("the compiler's words are not on screen:\n%s", body)
	}
}

// failingRow is a screen at w x h on exercise 3 (under-lock) with both its
// hints taken and the cursor on a failing row whose verdict is long: three
// failed invariants, the last ending in the word ZZEND.
func failingRow(t *testing.T, w, h int) *Model {
	t.Helper()
	m := screen(t, w, h)
	e := exercises.Ladder[2]
	m.c.Progress = common.KeptProgress(nil, func(*progress.Progress) {})
	m.c.Progress.Get().Exercises = map[string]progress.Exercise{e.ID: {Hints: len(e.Hints)}}
	rep := &exercises.Report{Current: e.ID, Passed: 2, Took: "9s", Exercises: make([]exercises.Status, len(exercises.Ladder))}
	long := "the second copy booked again: its lookup ran before the first copy's COMMIT, saw no booking under the key, and inserted a second one, charging the card twice"
	failed := &sim.Report{Verdict: &sim.Verdict{Says: long}}
	for i, detail := range []string{long, long, long + " ZZEND"} {
		failed.Verdict.Failed = append(failed.Verdict.Failed, sim.Invariant{Name: fmt.Sprintf("invariant %d", i+1), Detail: detail})
	}
	for i := range rep.Exercises {
		rep.Exercises[i] = exercises.Status{Exercise: exercises.Ladder[i], State: exercises.Passed}
	}
	rep.Exercises[2].State = exercises.Failing
	rep.Exercises[2].Rows = []check.Row{
		{Name: "lookup-before-lock", Title: "Two copies at the same instant", State: check.Fail, Says: long, Report: failed},
		{Name: "concurrent-copies", Title: "Simultaneous copies", State: check.Pass, Says: "one booking"},
		{Name: "last-seats", Title: "The last seats", State: check.Pass, Says: "no oversell"},
		{Name: "replay-after-sellout", Title: "Replay after the sellout", State: check.Pass, Says: "the booking replayed"},
	}
	m.rep, m.checked = rep, time.Now()
	m.sel, m.row = 2, 0
	return m
}

// At 80x24 with both hints shown, the whole verdict of a failing row can
// be read: what does not fit below the ladder scrolls, a line says so, and
// the footer names the key.
func TestALongVerdictScrollsAt80x24(t *testing.T) {
	m := failingRow(t, 80, 24)
	if got := m.screenText(); !strings.Contains(got, "Hint 2") {
		t.Fatalf("the hints are not on screen:\n%s", got)
	}
	var scroll bool
	for _, b := range m.KeyMap().ShortHelp() {
		scroll = scroll || slices.Contains(b.Keys(), "pgdown")
	}
	if !scroll {
		t.Errorf("the footer names no key that scrolls the verdict: %v", m.KeyMap().ShortHelp())
	}
	for range 20 {
		if strings.Contains(m.screenText(), "ZZEND") {
			break
		}
		m.Update(uitest.Key("pgdown"))
	}
	got := m.screenText()
	if !strings.Contains(got, "ZZEND") {
		t.Fatalf("the end of the verdict is never on screen, pgdown pressed 20 times:\n%s", got)
	}
	if n := len(strings.Split(got, "\n")); n > m.c.Body() {
		t.Errorf("%d lines drawn, more than the %d of the body:\n%s", n, m.c.Body(), got)
	}
}

// h gives the next hint of the exercise the learner is on (← now), not
// of the one under the cursor, and brings the cursor to it; the footer
// and the hint name the exercise.
func TestAHintIsForTheCurrentExercise(t *testing.T) {
	m := failingRow(t, 80, 24)
	now, other := exercises.Ladder[1], exercises.Ladder[2]
	m.rep.Current, m.rep.Exercises[1].State = now.ID, exercises.Failing
	m.c.Progress.Get().Exercises = map[string]progress.Exercise{}
	m.moved = true // the learner walked the cursor down into exercise 3's rows
	var names bool
	for _, b := range m.KeyMap().ShortHelp() {
		names = names || slices.Contains(b.Keys(), "h") && strings.Contains(b.Help().Desc, "2")
	}
	if !names {
		t.Errorf("the footer's h does not name exercise 2: %v", m.KeyMap().ShortHelp())
	}
	m.Update(uitest.Key("h"))
	got := m.c.Progress.Get().Exercises
	if got[now.ID].Hints != 1 || got[other.ID].Hints != 0 {
		t.Errorf("after h, hints taken: %s %d, %s %d; want 1 of the current exercise's, none of the cursor's", now.ID, got[now.ID].Hints, other.ID, got[other.ID].Hints)
	}
	if screen := m.screenText(); m.sel != 1 || !strings.Contains(screen, "Hint 1 of 2 for exercise 2:") {
		t.Errorf("after h, the cursor is on exercise %d, and the hint is not said to be exercise 2's:\n%s", m.sel+1, screen)
	}
}

// Why nothing was checked is wrapped at 80 columns, never cut: its end
// says what to install.
func TestWhyNothingWasCheckedIsWrappedWhole(t *testing.T) {
	m := failingRow(t, 80, 24)
	m.rep.Stopped = "the exercises are built with Go, and there is no go command on PATH: install Go " + exercises.MinGo + " or newer (https://go.dev/dl/)"
	got := m.screenText()
	if !strings.Contains(got, "(https://go.dev/dl/)") {
		t.Errorf("the reason is cut:\n%s", got)
	}
}
