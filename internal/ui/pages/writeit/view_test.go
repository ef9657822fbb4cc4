package writeit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/ui/common"
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
