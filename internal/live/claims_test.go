package live

import (
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// runToEnd runs variant v of scenario name to its end and returns the
// symptom the quiz shows.
func runToEnd(t *testing.T, rs *Runs, name string, v sim.Variant) (quiz.Symptom, *sim.Report) {
	t.Helper()
	r := rs.Start(scenario(t, name), sim.Options{Variant: v})
	<-r.Done()
	rep, err := r.Result()
	if err != nil {
		t.Fatalf("%s (%s): %v", name, v, err)
	}
	return quiz.SymptomOf(rep), rep
}

// TestBreakItClaims runs every live question of the quiz on the real
// PostgreSQL: the symptom run gives exactly the numbers the question
// claims, and the run shown beside it differs the way the question says.
func TestBreakItClaims(t *testing.T) {
	rs := newRuns(t)
	for _, q := range quiz.BreakIt().Questions {
		t.Run(q.ID, func(t *testing.T) {
			t.Parallel()
			l := q.Live
			got, rep := runToEnd(t, rs, l.Scenario, l.Variant)
			if rep.Scenario != l.Scenario || rep.Variant != l.Variant {
				t.Fatalf("report of %s (%s), want %s (%s)", rep.Scenario, rep.Variant, l.Scenario, l.Variant)
			}
			if err := l.Claim.Check(got); err != nil {
				t.Errorf("%v\nthe run: %s", err, got)
			}
			beside, _ := runToEnd(t, rs, l.Scenario, l.Beside)
			switch l.Beside {
			case sim.Correct:
				// The fix: every invariant holds, and the symptom is gone.
				if len(beside.Broken) != 0 {
					t.Errorf("the correct design beside it breaks %q", beside.Broken)
				}
				if beside.Rows >= got.Rows && slices.Equal(beside.Statuses, got.Statuses) {
					t.Errorf("the correct design shows the same symptom: %s", beside)
				}
			case sim.Broken:
				// breakit/key-already-used: an engine without the comparison
				// answers 200 with a booking the request did not ask for.
				if !slices.Equal(beside.Statuses, []int{200, 200}) || !slices.Contains(beside.Broken, sim.InvAnswerMatches) {
					t.Errorf("the broken engine beside it: %s", beside)
				}
			}
		})
	}
}

// A variant the scenario does not have fails the run with a message that
// says so, and leaves nothing behind.
func TestRunOfAMissingVariantFails(t *testing.T) {
	rs := newRuns(t)
	r := rs.Start(scenario(t, "replay-after-sellout"), sim.Options{Variant: sim.Broken})
	<-r.Stopped()
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "no broken variant") {
		t.Errorf("err = %v", err)
	}
}
