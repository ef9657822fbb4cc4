package verdict

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/sim"
)

var st = common.NewStyles(true)

var broken = &sim.Verdict{
	Says:   "charged twice: 2 bookings for one click",
	Failed: []sim.Invariant{{Name: sim.InvOneBookingPerIntent, Detail: "1 intent booked more than once"}},
	Diagnosis: &sim.Diagnosis{Symptom: "One click books, and charges, the user twice", Cause: "The client generated a fresh key for each retry",
		Where: "The client's key handling (sim/client/client.go → Client.Book)", Fix: "Make one key per intent and send it again on every retry"},
}

// Every word of a verdict is on screen at any width: wrapped, never cut,
// and no line wider than asked.
func TestNothingIsCut(t *testing.T) {
	for _, w := range []int{40, 60, 80, 120} {
		for name, out := range map[string]string{"render": Render(st, broken, w), "big": Big(st, broken, w)} {
			plain := ansi.Strip(out)
			for _, l := range strings.Split(plain, "\n") {
				if ansi.StringWidth(l) > w {
					t.Errorf("%s at %d: %q is %d wide", name, w, l, ansi.StringWidth(l))
				}
			}
			flat := strings.Join(strings.Fields(strings.NewReplacer("║", " ", "═", " ", "╔", " ", "╗", " ", "╚", " ", "╝", " ").Replace(plain)), " ")
			for _, want := range []string{"charged twice: 2 bookings for one click", "The client generated a fresh key for each retry", "Make one key per intent"} {
				if !strings.Contains(strings.ToLower(flat), strings.ToLower(want)) {
					t.Errorf("%s at %d lacks %q:\n%s", name, w, want, plain)
				}
			}
			if strings.Contains(plain, "…") {
				t.Errorf("%s at %d cuts something:\n%s", name, w, plain)
			}
		}
	}
}

// A run that held says so with a check; a broken one with a cross, its
// failed invariants and the four columns.
func TestHeldAndBroken(t *testing.T) {
	held := ansi.Strip(Render(st, &sim.Verdict{Held: true, Says: "one booking, 2 seats"}, 80))
	if held != "✓ one booking, 2 seats" {
		t.Errorf("held: %q", held)
	}
	out := ansi.Strip(Render(st, broken, 80))
	for _, want := range []string{"✗ charged twice", "broken: " + sim.InvOneBookingPerIntent, "symptom", "cause", "look at", "fix"} {
		if !strings.Contains(out, want) {
			t.Errorf("broken lacks %q:\n%s", want, out)
		}
	}
}
