package live

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// What each predict question's run must show on its report, whatever the
// question's slots say: the facts the set teaches.
var predictFacts = map[string]func(*sim.Report) error{
	// The lock and the lookup act, not the constraint.
	"concurrent-copies": func(rep *sim.Report) error {
		if rep.Guards.Lookups == 0 || rep.Guards.Violations != 0 {
			return fmt.Errorf("guards %+v, want lookups and no unique violation", rep.Guards)
		}
		return nil
	},
	// One 200 and one 409, not two 200s; the constraint acts.
	"key-reuse-two-events": func(rep *sim.Report) error {
		if got := statuses(rep); !slices.Equal(got, []int{200, 409}) || rep.Guards.Violations == 0 {
			return fmt.Errorf("answers %v, guards %+v; want one 200 and one 409, settled by a unique violation", got, rep.Guards)
		}
		return nil
	},
	// Nothing stored after the 500s, then the later try books once.
	"retries-exhausted": func(rep *sim.Report) error {
		var arrived []int
		for _, a := range rep.Answers {
			arrived = append(arrived, a.Status)
		}
		if !slices.Equal(arrived, []int{500, 500, 500, 200}) || rep.BookingRows != 1 || rep.SeatsTaken != 2 {
			return fmt.Errorf("answers in arrival order %v, %d rows, %d seats; want three 500s, then one 200, 1 row, 2 seats", arrived, rep.BookingRows, rep.SeatsTaken)
		}
		return nil
	},
	// The constraint settles what the lookup before the lock missed, and
	// the loser answers with the winner's booking.
	"lookup-before-lock": func(rep *sim.Report) error {
		ids := map[string]bool{}
		for _, a := range rep.Answers {
			if a.BookingID != nil {
				ids[*a.BookingID] = true
			}
		}
		if got := statuses(rep); !slices.Equal(got, []int{200, 200}) || len(ids) != 1 || rep.Guards.Violations == 0 {
			return fmt.Errorf("answers %v with %d booking ids, guards %+v; want two 200s with one booking, a unique violation", got, len(ids), rep.Guards)
		}
		return nil
	},
	// The retry's lookup replays although no seat is left.
	"last-seats": func(rep *sim.Report) error {
		if got := statuses(rep); !slices.Equal(got, []int{200}) || rep.Guards.Lookups == 0 {
			return fmt.Errorf("answers %v, guards %+v; want one 200, found by the lookup", got, rep.Guards)
		}
		return nil
	},
}

// statuses is the statuses of the answers of rep, sorted.
func statuses(rep *sim.Report) []int {
	var out []int
	for _, a := range rep.Answers {
		out = append(out, a.Status)
	}
	slices.Sort(out)
	return out
}

// Every predict question runs on the real PostgreSQL, and its prediction is
// graded from that run's own report: the predictions the question expects
// grade right; each of them changed to another choice grades wrong, by one
// slot, saying what the run had in its own numbers and what was predicted;
// and the report shows the facts the set teaches.
func TestPredictGradesRealRuns(t *testing.T) {
	rs := newRuns(t)
	qs := quiz.PredictSet().Questions
	if len(qs) < 5 {
		t.Fatalf("%d predict questions, want at least 5", len(qs))
	}
	for _, q := range qs {
		t.Run(q.ID, func(t *testing.T) {
			t.Parallel()
			p := q.Predict
			r := rs.Start(scenario(t, p.Scenario), p.Options())
			<-r.Done()
			rep, err := r.Result()
			if err != nil {
				t.Fatalf("%s (%s): %v", p.Scenario, p.Variant, err)
			}
			if rep.Scenario != p.Scenario || rep.Variant != p.Variant {
				t.Fatalf("report of %s (%s), want %s (%s)", rep.Scenario, rep.Variant, p.Scenario, p.Variant)
			}
			fact, ok := predictFacts[p.Scenario]
			if !ok {
				t.Fatalf("no fact to check the run of %s against", p.Scenario)
			}
			if err := fact(rep); err != nil {
				t.Errorf("the run: %v", err)
			}
			right := make([]int, len(p.Slots))
			for i, s := range p.Slots {
				right[i] = s.Right
			}
			res, err := quiz.GradePredict(q, right, rep)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Correct || res.Score != 1 {
				var had []string
				for _, s := range p.Slots {
					had = append(had, fmt.Sprintf("%s %q", s.Measure, quiz.Measured(s.Measure, rep)))
				}
				t.Fatalf("the expected predictions grade %+v; the run had %s", res, strings.Join(had, ", "))
			}
			n := float64(len(p.Slots))
			for i, s := range p.Slots {
				for j := range s.Choices {
					if j == s.Right {
						continue
					}
					picks := slices.Clone(right)
					picks[i] = j
					res, err := quiz.GradePredict(q, picks, rep)
					if err != nil {
						t.Fatal(err)
					}
					nums := quiz.RunNumbers(s.Measure, rep)
					if res.Correct || res.Score != (n-1)/n || len(res.Missed) != 1 || res.Positions[i] ||
						!strings.Contains(res.Missed[0], nums) || !strings.Contains(res.Missed[0], "you said "+s.Choices[j]) {
						t.Errorf("predicting %q for %s grades %+v; want it wrong, with the run's %q", s.Choices[j], s.What, res, nums)
					}
				}
			}
		})
	}
}
