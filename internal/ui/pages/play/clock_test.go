package play

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/seqdiag"
	"github.com/learn-idempotency/learn/sim"
)

// played is the play screen at w x h with the whole run of scenario name
// (variant v) kept, on the frame whose step is labelled label (the last
// frame when label is "").
func played(t *testing.T, name string, v sim.Variant, w, h int, label string) *Model {
	t.Helper()
	s, err := sim.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.Prepare(t.Context(), sim.DatabaseOf(testDB.NewSchema), sim.Options{Variant: v})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if _, err := run.Execute(t.Context()); err != nil {
		t.Fatal(err)
	}
	rows, err := run.Rows(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := &common.Common{Styles: common.NewStyles(true), Keys: common.NewKeyMap(), Width: w, Height: h, DB: live.Existing(testDB)}
	m := New(c, s, v)
	m.phase, m.seats = phaseRunning, run.Setup.Seats
	for _, l := range run.Lanes() {
		m.lanes = append(m.lanes, seqdiag.Lane{ID: l.ID, Name: l.Name})
	}
	m.events = run.Trace.Recorded()
	m.view = -1
	for i, ev := range m.events {
		if !ev.Kind.IsStep() {
			continue
		}
		m.frames = append(m.frames, frame{ev: i, rows: rows, loaded: true})
		if label != "" && ev.Label == label && m.view < 0 {
			m.view = len(m.frames) - 1
		}
	}
	if m.view < 0 {
		if label != "" {
			t.Fatalf("%s has no step %q", name, label)
		}
		m.view = len(m.frames) - 1
	}
	return m
}

// The play screen's clock is learn's simulated clock, and it says so, whole
// at 80x24: the header's time reads "simulated clock t=…"; at the step at
// which the scenario lets 25 hours pass, the caption says that learn moves
// its clock and no one waits (the diagram's arrow has no room for it), and
// the summary's story says "25 hours pass (simulated clock)". A step at
// which the clock did not jump says nothing of the kind.
func TestPlayLabelsItsClockSimulated(t *testing.T) {
	m := played(t, "lost-answer", sim.Correct, 80, 24, "")
	if h := ansi.Strip(m.header(80)); !strings.Contains(h, "simulated clock t=") {
		t.Errorf("the header does not say its clock is simulated: %q", h)
	}
	m = played(t, "redis-ttl", sim.Broken, 80, 24, "25 hours pass")
	if view := ansi.Strip(m.View()); !strings.Contains(flat(view), "the retry goes out 25 hours later (learn moves its simulated clock 25h0m0s ahead: no one waits)") {
		t.Errorf("the caption does not say the 25 hours are simulated:\n%s", view)
	}
	m.view, m.phase, m.report = len(m.frames), phaseFinished, &sim.Report{}
	if view := ansi.Strip(m.View()); !m.atSummary() || !strings.Contains(view, "25 hours pass (simulated clock)") {
		t.Errorf("the summary does not say the 25 hours are simulated:\n%s", view)
	}
	m = played(t, "redis-ttl", sim.Broken, 80, 24, "in-process Redis")
	if view := ansi.Strip(m.View()); strings.Contains(view, "simulated clock)") || strings.Contains(view, "no one waits") {
		t.Errorf("a note at which no time passed says the clock moved:\n%s", view)
	}
}

// flat is s with its lines joined and runs of spaces made one, so that a
// phrase wrapped across lines or set in a box is found.
func flat(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.Trim(l, " │"))
	}
	return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
}
