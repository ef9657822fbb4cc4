package writeit

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/sim/check"
	"github.com/learn-idempotency/learn/sim/trace"
)

// playing is a screen at 80x24 with a play open on it, fed no run: the
// test sends the play's events itself.
func playing(t *testing.T) *Model {
	t.Helper()
	c := &common.Common{Ctx: context.Background(), Width: 80, Height: 24, Styles: common.NewStyles(true), Keys: common.NewKeyMap()}
	m := New(c, t.TempDir())
	m.present, m.plays = true, 1
	m.play = &playView{id: 1, title: "Two copies at the same instant", view: -1, pb: &exercises.Playback{}}
	return m
}

// statement is the step of copy's statement sql, and result what it got
// back (a side event).
func statement(copy int, sql string) trace.Event {
	return trace.Event{Kind: trace.KindStatement, Intent: 1, Copy: copy, Try: 1, Text: "#1." + string(rune('0'+copy)) + ".1 sends " + sql}
}

func result(copy int, said string) trace.Event {
	return trace.Event{Kind: trace.KindSQL, Intent: 1, Copy: copy, Try: 1, Text: said}
}

// lockRace feeds m the row lock's race as the under-lock check plays it:
// copy 1 locks the event row, copy 2's lock waits for copy 1's COMMIT, and
// its answer comes only once that COMMIT has gone.
func lockRace(m *Model) {
	for _, ev := range []trace.Event{
		statement(1, "SELECT seats_left FROM events FOR UPDATE"), result(1, "SELECT 1"),
		statement(2, "SELECT seats_left FROM events FOR UPDATE"), // waits for copy 1's lock
		statement(1, "INSERT INTO bookings"), result(1, "INSERT 0 1"),
		statement(1, "COMMIT"), result(1, "COMMIT"), result(2, "SELECT 1"), // the lock let go
		statement(2, "SELECT id FROM bookings"),
	} {
		m.Update(playEventMsg{id: 1, ev: ev})
	}
}

func (m *Model) screenText() string { return ansi.Strip(m.View()) }

// lineOf is the step on screen that holds s, its wrapped lines joined.
func lineOf(screen, s string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if !strings.Contains(l, s) {
			continue
		}
		for _, more := range lines[i+1:] {
			if strings.TrimSpace(more) == "" || strings.HasPrefix(more, "  #") || strings.HasPrefix(more, "› ") {
				break
			}
			l += " " + strings.TrimSpace(more)
		}
		return l
	}
	return ""
}

// A step's result is shown only from the step at which it had come:
// stepping back hides what came later, stepping forward shows it again.
func TestAPlayStepShowsOnlyWhatHadComeByThen(t *testing.T) {
	m := playing(t)
	lockRace(m)
	if got := m.screenText(); !strings.Contains(got, "step 5 of 5") || !strings.Contains(lineOf(got, "#1.2.1 sends SELECT seats_left"), "→ SELECT 1") {
		t.Fatalf("at the newest step, copy 2's lock is not shown answered:\n%s", got)
	}
	m.Update(uitest.Key("p"))
	m.Update(uitest.Key("p"))
	got := m.screenText()
	if !strings.Contains(got, "step 3 of 5") {
		t.Fatalf("two steps back is not step 3:\n%s", got)
	}
	if l := lineOf(got, "#1.2.1 sends SELECT seats_left"); strings.Contains(l, "SELECT 1") {
		t.Errorf("at step 3, copy 2's lock shows the answer it got at step 4: %q", l)
	}
	if l := lineOf(got, "#1.1.1 sends SELECT seats_left"); !strings.HasSuffix(strings.TrimSpace(l), "→ SELECT 1") {
		t.Errorf("at step 3, copy 1's lock does not show the answer it had by then: %q", l)
	}
	m.Update(uitest.Key("n"))
	got = m.screenText()
	if l := lineOf(got, "#1.2.1 sends SELECT seats_left"); !strings.Contains(got, "step 4 of 5") || !strings.Contains(l, "→ SELECT 1") {
		t.Errorf("at step 4 again, copy 2's lock does not show its answer: %q\n%s", l, got)
	}

	// The run's verdict is what came last: shown at the newest step only.
	m.Update(playDoneMsg{id: 1, row: check.Row{State: check.Pass, Says: "one booking, every copy answered it"}})
	if got := m.screenText(); !strings.Contains(got, "step 4 of 5") || strings.Contains(got, "one booking, every copy answered it") {
		t.Errorf("at step 4 of a run ended, the screen shows its verdict, not step 4 of 5:\n%s", got)
	}
	m.Update(uitest.Key("G"))
	if got := m.screenText(); !strings.Contains(got, "✓ one booking, every copy answered it") {
		t.Errorf("at the last step of a run ended, its verdict is not shown:\n%s", got)
	}
}

// A statement let go and not answered says why, as of the step on
// screen: waiting for a lock once another statement has gone after it (a
// played run lets another go only when every request in flight is held or
// waits for a lock), else no answer yet; the held one says it is not sent.
func TestAPlayedStatementSaysItWaits(t *testing.T) {
	m := playing(t)
	lockRace(m)
	m.Update(uitest.Key("g"))
	m.Update(uitest.Key("n"))
	got := m.screenText()
	if l := lineOf(got, "#1.2.1 sends SELECT seats_left"); !strings.Contains(got, "step 2 of 5") || !strings.HasSuffix(strings.TrimSpace(l), "· held, not sent yet") {
		t.Errorf("at step 2, copy 2's lock, the step on screen, does not say it is held: %q\n%s", l, got)
	}
	m.Update(uitest.Key("n"))
	got = m.screenText()
	if l := lineOf(got, "#1.2.1 sends SELECT seats_left"); !strings.Contains(got, "step 3 of 5") || !strings.HasSuffix(strings.TrimSpace(l), "→ no answer yet: it waits for a lock another transaction holds, or runs long") {
		t.Errorf("at step 3, copy 2's lock does not say it waits for the lock: %q\n%s", l, got)
	}
	m.Update(uitest.Key("G"))
	got = m.screenText()
	if l := lineOf(got, "#1.2.1 sends SELECT id FROM bookings"); !strings.HasSuffix(strings.TrimSpace(l), "· held, not sent yet") {
		t.Errorf("the held statement does not say it is not sent: %q\n%s", l, got)
	}
}

// Stepping back to a step shows its statement as it was shown live, held
// and not sent, though its answer came once it was let go; the next step
// shows the answer.
func TestASteppedBackStatementIsHeldAgain(t *testing.T) {
	m := playing(t)
	m.Update(playEventMsg{id: 1, ev: statement(1, "UPDATE events")})
	m.play.pending = false // let go: what comes now is of the next step
	m.Update(playEventMsg{id: 1, ev: result(1, "UPDATE 1")})
	m.Update(playEventMsg{id: 1, ev: statement(1, "COMMIT")})
	m.Update(uitest.Key("g"))
	got := m.screenText()
	if l := lineOf(got, "#1.1.1 sends UPDATE events"); !strings.Contains(got, "step 1 of 2") || !strings.HasSuffix(strings.TrimSpace(l), "· held, not sent yet") {
		t.Errorf("back at step 1, its UPDATE is not held as it was: %q\n%s", l, got)
	}
	m.Update(uitest.Key("n"))
	got = m.screenText()
	if l := lineOf(got, "#1.1.1 sends UPDATE events"); !strings.Contains(got, "step 2 of 2") || !strings.HasSuffix(strings.TrimSpace(l), "→ UPDATE 1") {
		t.Errorf("at step 2, step 1's UPDATE does not show its answer: %q\n%s", l, got)
	}
}

// The footer offers only what a key does now: no space once the run has
// ended, and the header says when the learner has stepped back.
func TestAPlaysKeysAreWhatTheyDoNow(t *testing.T) {
	m := playing(t)
	lockRace(m)
	hasSpace := func() bool {
		for _, b := range m.KeyMap().ShortHelp() {
			if slices.Contains(b.Keys(), "space") {
				return true
			}
		}
		return false
	}
	if !hasSpace() {
		t.Errorf("a play under way offers no space: %v", m.KeyMap().ShortHelp())
	}
	m.Update(uitest.Key("p"))
	if got := m.screenText(); !strings.Contains(got, "step 4 of 5 · stepped back") {
		t.Errorf("stepped back, the header does not say so:\n%s", got)
	}
	m.Update(playDoneMsg{id: 1, row: check.Row{State: check.Pass, Says: "one booking"}})
	if hasSpace() {
		t.Errorf("a play that has ended offers space: %v", m.KeyMap().ShortHelp())
	}
}
