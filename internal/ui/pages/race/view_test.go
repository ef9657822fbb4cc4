package race

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"pgregory.net/rapid"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/trace"
)

// finished is a race of n copies as the run's report leaves it: every copy
// answered, the broken design's verdict with failed invariants and a
// diagnosis (the longest there is), or the correct one's.
func finished(c *common.Common, n int, variant sim.Variant, failed int) *Model {
	m := New(c)
	m.n, m.variant = n, variant
	m.cells = make([]raceCell, n)
	rep := &sim.Report{BookingRows: n, SeatsTaken: 2 * n}
	for i := range m.cells {
		id := fmt.Sprintf("b%d", i+1)
		m.cells[i] = raceCell{sent: true, status: 200, bookingID: id}
		rep.Answers = append(rep.Answers, sim.AnswerReport{Status: 200, BookingID: &id})
	}
	s, _ := sim.Lookup("concurrent-copies")
	m.design = s.Design(variant)
	if variant == sim.Correct {
		rep.Guards.Lookups = n - 1
	}
	v := &sim.Verdict{Held: variant == sim.Correct, Says: "one booking, 2 seats, every copy got the same booking back"}
	if variant == sim.Broken {
		v.Says = fmt.Sprintf("charged %d times: %d bookings for one click", n, n)
		for i := range failed {
			v.Failed = append(v.Failed, sim.Invariant{Name: fmt.Sprintf("invariant %d of the lesson", i+1), Detail: "rows in PostgreSQL say otherwise, by a margin"})
		}
		v.Diagnosis = &sim.Diagnosis{Symptom: "several bookings for one click", Cause: "every copy looked up the key before any inserted it",
			Where: "the booking transaction: the SELECT before the INSERT", Fix: "lock the event's row, and put a UNIQUE constraint on (user, key)"}
	}
	rep.Verdict = v
	m.report = rep
	return m
}

// The race's view is never taller or wider than its room, at any size the
// app allows and any number of copies, wherever the learner scrolled; its
// title, its copies and its verdict's headline stay on screen; and when
// the body does not fit, a line says what is above or below. Seen before:
// at 80x24 with 40 or 100 copies the title and the copies scrolled off the
// top and the verdict was cut at the bottom, with no hint.
func TestRaceViewFitsItsRoom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := rapid.IntRange(common.MinWidth, 160).Draw(t, "width")
		h := rapid.IntRange(common.MinHeight, 60).Draw(t, "height")
		n := rapid.IntRange(sim.MinCopies, sim.MaxCopies).Draw(t, "copies")
		variant := rapid.SampledFrom([]sim.Variant{sim.Correct, sim.Broken}).Draw(t, "variant")
		failed := rapid.IntRange(0, 5).Draw(t, "failed")
		c := &common.Common{Width: w, Height: h, Styles: common.NewStyles(true), Keys: common.NewKeyMap()}
		c.Presenting = rapid.Bool().Draw(t, "presenting")
		m := finished(c, n, variant, failed)
		for _, k := range rapid.SliceOfN(rapid.SampledFrom([]string{"j", "k", "pgdown", "pgup", "g", "G", "wheel down", "wheel up"}), 0, 30).Draw(t, "scrolls") {
			switch k {
			case "wheel down":
				m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
			case "wheel up":
				m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
			default:
				m.key(press(k))
			}
		}
		view := m.View()
		lines := strings.Split(view, "\n")
		if len(lines) > c.Body() {
			t.Fatalf("%dx%d, %d copies: %d lines for %d:\n%s", w, h, n, len(lines), c.Body(), view)
		}
		for i, l := range lines {
			if lw := lipgloss.Width(l); lw > w {
				t.Fatalf("%dx%d, %d copies: line %d is %d wide: %q", w, h, n, i, lw, ansi.Strip(l))
			}
		}
		plain := ansi.Strip(view)
		if !strings.HasPrefix(plain, "Race") || !strings.Contains(ansi.Strip(lines[1]), fmt.Sprintf("Copies: %d", n)) {
			t.Fatalf("%dx%d, %d copies: the title or the copies are gone:\n%s", w, h, n, plain)
		}
		headline := strings.Fields(m.report.Verdict.Says)[1] // Big capitalises the first
		if !strings.Contains(plain, headline) {
			t.Fatalf("%dx%d, %d copies: the verdict %q is not on screen:\n%s", w, h, n, headline, plain)
		}
		if body := strings.Count(m.body(w), "\n") + 1; body+2+lipgloss.Height(m.status(w)) > c.Body() &&
			!strings.Contains(plain, "above") && !strings.Contains(plain, "below") {
			t.Fatalf("%dx%d, %d copies: the body (%d lines) does not fit and nothing says so:\n%s", w, h, n, body, plain)
		}
	})
}

// The legend wraps between its items, never inside one, and never runs
// past w. Seen before: it ended in "✕ fai…" at 80 columns.
func TestLegendKeepsItsItemsWhole(t *testing.T) {
	for _, w := range []int{common.MinWidth, 80, 200} {
		got := legend(w)
		for _, l := range strings.Split(got, "\n") {
			if lipgloss.Width(l) > w {
				t.Errorf("at %d: %q is %d wide", w, l, lipgloss.Width(l))
			}
		}
		for _, it := range legendItems {
			if !strings.Contains(got, it) {
				t.Errorf("at %d the legend lost %q:\n%s", w, it, got)
			}
		}
	}
}

// press is the key press Bubble Tea sends for k.
func press(k string) tea.KeyPressMsg { return uitest.Key(k) }

// The tally says which guard settled the copies, in a learner's words, from
// the report's Guards: the row lock (the lookups that replayed) against the
// UNIQUE constraint (unique violations, 23505), or none.
func TestGuardsSayWhichGuardSettledTheCopies(t *testing.T) {
	tests := []struct {
		g      sim.Guards
		locked bool
		want   string
	}{
		{sim.Guards{Lookups: 99}, true, "the row lock queued them: 99 lookups replayed, 0 unique violations (23505)"},
		{sim.Guards{Lookups: 1}, true, "the row lock queued them: 1 lookup replayed, 0 unique violations (23505)"},
		{sim.Guards{Lookups: 9}, false, "the key lookups settled them: 9 lookups replayed, 0 unique violations (23505)"},
		{sim.Guards{Violations: 1}, false, "the UNIQUE constraint settled them: 0 lookups replayed, 1 unique violation (23505)"},
		{sim.Guards{Lookups: 2, Violations: 3}, true, "the key lookups and the UNIQUE constraint settled them: 2 lookups replayed, 3 unique violations (23505)"},
		{sim.Guards{}, false, "no guard acted: 0 lookups replayed, 0 unique violations (23505)"},
		{sim.Guards{StoreHits: 4}, true, "no guard acted: 0 lookups replayed, 0 unique violations (23505)"},
	}
	for _, tt := range tests {
		if got := guardsSay(tt.g, tt.locked); got != tt.want {
			t.Errorf("guardsSay(%+v, locked %v) = %q, want %q", tt.g, tt.locked, got, tt.want)
		}
	}
}

// Where learn holds the copies to force their interleaving (a pause event
// of the run's trace), the race says so, whole, beside the grid; a race
// whose trace has no pause says nothing of the kind. The tally's guards
// and its wall time are whole too, at the smallest width and at 80.
func TestRaceSaysWhereLearnHoldsTheCopies(t *testing.T) {
	for _, w := range []int{common.MinWidth, 80} {
		c := &common.Common{Width: w, Height: 24, Styles: common.NewStyles(true), Keys: common.NewKeyMap()}
		correct := finished(c, 10, sim.Correct, 0)
		body := flat(ansi.Strip(correct.body(w)))
		for _, want := range []string{"the row lock queued them: 9 lookups replayed, 0 unique violations (23505)", "ms of wall time"} {
			if !strings.Contains(body, want) {
				t.Errorf("at %d the correct race does not say %q:\n%s", w, want, body)
			}
		}
		if strings.Contains(body, "learn holds") {
			t.Errorf("at %d a race without a pause says learn holds its copies:\n%s", w, body)
		}
		broken := finished(c, 10, sim.Broken, 2)
		broken.record(trace.Event{Kind: trace.KindPause, Copy: 3, Label: "held after the lookup"})
		body = flat(ansi.Strip(broken.body(w)))
		for _, want := range []string{"learn holds every copy after the lookup until all 10 are there, so they interleave every time (◔)",
			"no guard acted: 0 lookups replayed, 0 unique violations (23505)"} {
			if !strings.Contains(body, want) {
				t.Errorf("at %d the broken race does not say %q:\n%s", w, want, body)
			}
		}
	}
}

// flat is s with runs of white space made one space: a sentence wrapped
// across lines reads whole.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// v after a race switches the design and takes the race on screen with it:
// the broken design's 30 bookings and its ✗ do not stay under the correct
// design's header, reading as its result.
func TestSwitchingTheDesignTakesTheLastRaceAway(t *testing.T) {
	c := &common.Common{Width: 80, Height: 24, Styles: common.NewStyles(true), Keys: common.NewKeyMap()}
	m := finished(c, 30, sim.Broken, 2)
	before := ansi.Strip(m.View())
	if !strings.Contains(before, "charged 30 times") {
		t.Fatalf("the broken race is not on screen:\n%s", before)
	}
	m.key(press("v"))
	after := ansi.Strip(m.View())
	if m.variant != sim.Correct || strings.Contains(after, "charged 30 times") || strings.Contains(after, "✗") {
		t.Errorf("after v, the correct design's screen still shows the broken race:\n%s", after)
	}
}
