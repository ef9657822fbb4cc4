package ui

import (
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/engine"
)

// v is offered (in the hint under the summary, the footer and the ?
// overlay) only where it switches the design: a scenario with a broken
// variant, played outside the lab.
func TestVIsOfferedOnlyWhereItWorks(t *testing.T) {
	t.Parallel() // an app of its own, its own schemas and progress file
	const hint, help = "v the other design", "correct/broken"
	cases := []struct {
		name  string
		open  common.Open
		works bool
	}{
		{"a scenario with a broken variant", common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, true},
		{"a scenario with no broken variant", common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "replay-after-sellout"}}, false},
		{"a design of the lab", common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}, Design: &sim.Switches{}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := startUI(t, c.open, 100, 40)
			u.waitStep(t, "step 1 ·")
			u.press(slices.Repeat([]string{"n"}, 60)...)
			u.waitFor(t, "summary of")
			s := u.screen()
			if got := strings.Contains(s, hint); got != c.works {
				t.Errorf("summary offers %q: %v, want %v\n%s", hint, got, c.works, s)
			}
			if got := strings.Contains(s, help); got != c.works {
				t.Errorf("footer offers %q: %v, want %v\n%s", help, got, c.works, s)
			}
			u.press("?")
			u.waitFor(t, "scroll down")
			if s := u.screen(); strings.Contains(s, help) != c.works {
				t.Errorf("? overlay lists %q: %v, want %v\n%s", help, !c.works, c.works, s)
			}
		})
	}
}

// Steps pressed right after r or v, while the new run is being prepared,
// are kept for it, as a burst of steps is during a run.
func TestStepsRightAfterARestartAreKept(t *testing.T) {
	for _, again := range []string{"r", "v"} {
		t.Run(again, func(t *testing.T) {
			u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, 80, 24)
			u.waitStep(t, "step 1 ·")
			u.press("n")
			u.waitStep(t, "step 2 ·")
			u.press(again, "n", "n", "n")
			u.waitStep(t, "step 4 ·")
		})
	}
}

// The design being played stays in the header whatever else gives way: at
// 80 columns a lab design beside a long title cut the design to "…".
func TestHeaderKeepsTheDesign(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lookup-before-lock"}, Design: &sim.Switches{Constraint: engine.NoUnique}}, 80, 24)
	u.waitFor(t, "step 1")
	u.press(slices.Repeat([]string{"n"}, 60)...)
	u.waitFor(t, "summary")
	u.waitUntil(t, "the summary's header with the design", func() bool {
		head, _, _ := strings.Cut(u.screen(), "\n")
		return strings.Contains(head, "· lab: constraint=none") && strings.Contains(head, "summary")
	})
}

// The run's numbers on the diagnosis are one sentence: at 60x20 the view
// cut it after "1 booking row ·", under a line saying only rows were
// below. It shows whole or waits below whole, and scrolling shows it.
func TestDiagnosisNeverCutsTheNumbers(t *testing.T) {
	u := startUI(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "last-seats", Variant: string(sim.Broken)}}, 60, 20)
	u.waitFor(t, "step 1 ·")
	u.toDiagnosis(t)
	u.waitFor(t, "✗ ")
	s := u.screen()
	if strings.Contains(s, "1 booking row") != strings.Contains(s, "2 seats taken") {
		t.Errorf("the run's numbers are cut:\n%s", s)
	}
	u.press("G")
	u.waitFor(t, "1 booking row", "2 seats taken")
}
