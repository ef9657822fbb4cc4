package quiz

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/learn-idempotency/learn/sim"
)

// SetPredict is the set "Predict, then run".
const SetPredict = "predict"

// Predict is what a predict question runs and what the learner predicts
// of the run before it plays.
type Predict struct {
	// Scenario is the sim scenario's name (sim.Lookup); Variant its
	// variant; Copies, for a scenario that takes copies, how many (0 is
	// sim's default).
	Scenario string
	Variant  sim.Variant
	Copies   int
	// Slots are the predictions, each picked from its choices.
	Slots []Slot
}

// Options are the sim options the question's run takes.
func (p *Predict) Options() sim.Options { return sim.Options{Variant: p.Variant, Copies: p.Copies} }

// Measure names a number of a run's report that a [Slot] predicts, and
// says how its value is written in [Slot.Values] ([Measured]).
type Measure string

// The measures.
const (
	// MeasureAnswers is the statuses of the answers that reached the
	// browser (Report.Answers), counted by status in increasing order:
	// "1×200 1×409".
	MeasureAnswers Measure = "answers"
	// MeasureRows is the booking rows afterwards (Report.BookingRows): "1".
	MeasureRows Measure = "rows"
	// MeasureSeats is the seats taken (Report.SeatsTaken): "2".
	MeasureSeats Measure = "seats"
	// MeasureGuard is the guard that stopped a repeat (Report.Guards):
	// "lookup" when only the key lookup found the key (Lookups > 0),
	// "violation" when only the UNIQUE constraint did (Violations > 0),
	// "both", or "none".
	MeasureGuard Measure = "guard"
)

// Slot is one prediction: what is predicted, its choices as the learner
// reads them, and for each the value of the report it stands for.
type Slot struct {
	Measure Measure
	// What is what the learner predicts, e.g. "booking rows afterwards".
	What string
	// Choices are the predictions offered (plain text); Values[i] is the
	// value of Measure that Choices[i] stands for.
	Choices, Values []string
	// Right is the index of the choice the question expects the run to
	// show; the grade comes from the run's report, and a test checks the
	// two agree on a real PostgreSQL.
	Right int
}

// Measured is the value of m in rep, as [Slot.Values] hold it.
func Measured(m Measure, rep *sim.Report) string {
	switch m {
	case MeasureAnswers:
		n := map[int]int{}
		for _, a := range rep.Answers {
			n[a.Status]++
		}
		var parts []string
		for _, st := range slices.Sorted(maps.Keys(n)) {
			parts = append(parts, fmt.Sprintf("%d×%d", n[st], st))
		}
		if len(parts) == 0 {
			return "none"
		}
		return strings.Join(parts, " ")
	case MeasureRows:
		return fmt.Sprint(rep.BookingRows)
	case MeasureSeats:
		return fmt.Sprint(rep.SeatsTaken)
	case MeasureGuard:
		switch g := rep.Guards; {
		case g.Lookups > 0 && g.Violations > 0:
			return "both"
		case g.Lookups > 0:
			return "lookup"
		case g.Violations > 0:
			return "violation"
		}
		return "none"
	}
	return ""
}

// RunNumbers is what the run's report shows for m, as the learner reads it
// beside their prediction: the statuses in arrival order, the rows, the
// seats, the guards' counts ("lookups 2 · unique violations 0").
func RunNumbers(m Measure, rep *sim.Report) string {
	switch m {
	case MeasureAnswers:
		if len(rep.Answers) == 0 {
			return "no answer reached the browser"
		}
		st := make([]string, len(rep.Answers))
		for i, a := range rep.Answers {
			st[i] = fmt.Sprint(a.Status)
		}
		return strings.Join(st, ", ")
	case MeasureRows, MeasureSeats:
		return Measured(m, rep)
	case MeasureGuard:
		return fmt.Sprintf("lookups %d · unique violations %d", rep.Guards.Lookups, rep.Guards.Violations)
	}
	return ""
}

// GradePredict grades the predictions picks (picks[i] an index into
// q.Predict.Slots[i].Choices) against the report of the question's run:
// each slot whose pick stands for the value the report shows scores
// 1/len(slots), and Positions says which did. Missed says, for each wrong
// slot, what the run showed and what was predicted ("booking rows
// afterwards: the run had 1; you said 2"), the run's own numbers
// included. The error wraps [ErrWrongKind]
// for a question that is not a predict question, and [ErrInvalidAnswer]
// for picks that do not fit the slots or a nil report.
func GradePredict(q Question, picks []int, rep *sim.Report) (Result, error) {
	if q.Kind != KindPredict || q.Predict == nil || len(q.Predict.Slots) == 0 {
		return Result{}, wrongKind(q, "GradePredict")
	}
	slots := q.Predict.Slots
	if len(picks) != len(slots) {
		return Result{}, invalid(q, "the question has %d predictions, got %d", len(slots), len(picks))
	}
	if rep == nil {
		return Result{}, invalid(q, "there is no run to grade the predictions against")
	}
	var r Result
	right := 0
	for i, s := range slots {
		if picks[i] < 0 || picks[i] >= len(s.Choices) {
			return Result{}, invalid(q, "%s: choice %d does not exist", s.What, picks[i])
		}
		got := Measured(s.Measure, rep)
		r.Positions = append(r.Positions, s.Values[picks[i]] == got)
		if s.Values[picks[i]] == got {
			right++
			continue
		}
		r.Missed = append(r.Missed, fmt.Sprintf("%s: the run had %s; you said %s", s.What, s.Said(got, rep), s.Choices[picks[i]]))
	}
	r.Score = float64(right) / float64(len(slots))
	r.Correct = right == len(slots)
	return r, nil
}

// Said is value as the learner reads it: the choice that stands for it,
// and the run's numbers when they say more ("the key lookup replays
// (lookups 2 · unique violations 0)"); the run's numbers alone when no
// choice stands for it.
func (s Slot) Said(value string, rep *sim.Report) string {
	nums := RunNumbers(s.Measure, rep)
	i := slices.Index(s.Values, value)
	switch {
	case i < 0:
		return nums
	case nums == s.Choices[i]:
		return nums
	}
	return s.Choices[i] + " (" + nums + ")"
}
