package checkcard

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/check"
)

// result is a check of two rows: a lost answer that held and the last
// seats that failed, with the proxy's passages of each.
func result() *check.Result {
	lost := []check.Passage{
		{Instance: "api-1", Method: "POST", Path: "/bookings", RequestID: "1.1", Key: "ee6b4cec-1111", Fault: "lose the answer", Status: 200, Answer: `{"booking": {"id": "b7"}}`},
		{Instance: "api-2", Method: "POST", Path: "/bookings", RequestID: "1.2", Key: "ee6b4cec-1111", Fault: "deliver", Status: 200, Delivered: true, Answer: `{"booking": {"id": "b7"}}`},
	}
	failed := []sim.Invariant{{Name: sim.InvIntentGetsItsBook, Detail: "1 intent booked but got another answer"}}
	return &check.Result{Summary: "2 scenarios: 1 ✓, 1 ✗", Took: "1s", Failed: 1, Rows: []check.Row{
		{Name: "other-instance", Title: "The retry lands on another API instance", State: check.Pass, Says: "the retry on api-2 got the same booking", Passages: lost,
			Report: &sim.Report{Verdict: &sim.Verdict{}}},
		{Name: "last-seats", Title: "The last seats", State: check.Fail, Says: "told “409 Not enough seats left” for the booking that was made for them",
			Sends: "book the last 2 seats", Report: &sim.Report{Verdict: &sim.Verdict{Failed: failed}}, Passages: lost[:1]},
	}}
}

func press(m *Model, keys ...string) {
	for _, k := range keys {
		m.Update(uitest.Key(k))
	}
}

func screen(m *Model) []string { return strings.Split(ansi.Strip(m.View().Content), "\n") }

// The scorecard fits the screen at 80x24 and 60x20, the cursor's row's
// failed invariants under the list; Enter on a row draws its sequence
// with the second instance's lane, the dropped answer and what came
// back; Esc goes back and q quits.
func TestScorecardAndSequence(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 20}} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			m := New(result(), "http://127.0.0.1:8081 and http://127.0.0.1:8082", true)
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			lines := screen(m)
			if len(lines) != size[1] {
				t.Errorf("%d lines on a screen of %d", len(lines), size[1])
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > size[0] {
					t.Errorf("a line of %d cells: %q", w, l)
				}
			}
			press(m, "down")
			view := strings.Join(screen(m), "\n")
			if !strings.Contains(view, "› ✗ The last seats") || !strings.Contains(view, "failed: "+sim.InvIntentGetsItsBook[:30]) {
				t.Errorf("the cursor on the failed row:\n%s", view)
			}
			press(m, "up", "enter")
			view = strings.Join(screen(m), "\n")
			for _, want := range []string{"learn's proxy", "api-2", "#1.1", "#1.2", "✕", "reset", "200 b7", "lose", "each try is POST /bookings"} {
				if !strings.Contains(view, want) {
					t.Errorf("the sequence has no %q:\n%s", want, view)
				}
			}
			press(m, "esc")
			if view := strings.Join(screen(m), "\n"); !strings.Contains(view, "↑/↓ a row") {
				t.Errorf("esc did not go back to the scorecard:\n%s", view)
			}
			if _, cmd := m.Update(uitest.Key("q")); cmd == nil {
				t.Error("q did not quit")
			}
		})
	}
}

// On a small screen (60x15, eleven rows) the verdict of the cursor's row
// is read whole, on the scorecard and over its sequence: the rows scroll
// with the cursor, and nothing is cut but the rows' own lines.
func TestASmallScreenShowsTheWholeVerdict(t *testing.T) {
	res := result()
	long := res.Rows[1]
	long.Says = "told “409 Not enough seats left: 0 left, you asked for 2” for the booking that was made for them, and the words go on past one line"
	res.Rows = nil
	for i := range 11 {
		r := long
		r.Title = fmt.Sprintf("Scenario %d", i+1)
		res.Rows = append(res.Rows, r)
	}
	m := New(res, "http://127.0.0.1:8081", true)
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 15})
	press(m, "end")
	words := func(view string) bool { return strings.Contains(strings.Join(strings.Fields(view), " "), long.Says) }
	view := strings.Join(screen(m), "\n")
	if len(screen(m)) != 15 || !strings.Contains(view, "› ✗ Scenario 11") || !words(view) || !strings.Contains(view, "failed: ") {
		t.Errorf("the last row's verdict is not whole on the scorecard:\n%s", view)
	}
	press(m, "enter")
	if view := strings.Join(screen(m), "\n"); len(screen(m)) != 15 || !words(view) {
		t.Errorf("the verdict is not whole over the sequence:\n%s", view)
	}
}
