package quiz

import (
	"errors"
	"fmt"
	"math"

	"github.com/dustin/go-humanize/english"
)

// ErrInvalidAnswer is wrapped by the error a grader returns when the input
// cannot be an answer to the question: an index out of range, a repeated
// pick, a wrong number of picks or ticks.
var ErrInvalidAnswer = errors.New("invalid answer")

// ErrWrongKind is wrapped by the error a grader returns for a question of a
// kind it does not grade, or a question missing the fields of its kind.
var ErrWrongKind = errors.New("wrong kind of question")

func invalid(q Question, format string, args ...any) error {
	return fmt.Errorf("quiz: %s: %w: %s", q.ID, ErrInvalidAnswer, fmt.Sprintf(format, args...))
}

func wrongKind(q Question, grader string) error {
	return fmt.Errorf("quiz: %s: %w: %s cannot grade a %q question", q.ID, ErrWrongKind, grader, q.Kind)
}

// GradeChoice grades a single or multiple choice question. picked holds
// indices into q.Choices, in any order, each at most once.
//
// Single choice: picked must hold exactly one index; the score is 1 for the
// right one and 0 otherwise.
//
// Multiple choice: picked may hold any number of indices, none included.
// Partial credit: the score is (right picks − wrong picks) / number of right
// choices, never below 0; so picking every choice scores 0 unless all are
// right. Correct is true only when picked equals the set of right choices.
//
// Missed lists the right choices the learner did not pick. The error wraps
// [ErrInvalidAnswer] for an index out of range, a repeated index, or a single
// choice without exactly one pick, and [ErrWrongKind] for other kinds.
func GradeChoice(q Question, picked []int) (Result, error) {
	if (q.Kind != KindSingle && q.Kind != KindMultiple) || len(q.Correct) == 0 {
		return Result{}, wrongKind(q, "GradeChoice")
	}
	if q.Kind == KindSingle && len(picked) != 1 {
		return Result{}, invalid(q, "a single-choice question takes exactly one pick, got %d", len(picked))
	}
	seen := make(map[int]bool, len(picked))
	for _, i := range picked {
		if i < 0 || i >= len(q.Choices) {
			return Result{}, invalid(q, "choice %d does not exist; the choices are 0 to %d", i, len(q.Choices)-1)
		}
		if seen[i] {
			return Result{}, invalid(q, "choice %d is picked twice", i)
		}
		seen[i] = true
	}
	right := 0
	var missed []string
	for _, c := range q.Correct {
		if seen[c] {
			right++
		} else {
			missed = append(missed, q.Choices[c])
		}
	}
	wrong := len(picked) - right
	score := math.Max(0, float64(right-wrong)/float64(len(q.Correct)))
	correct := right == len(q.Correct) && wrong == 0
	return Result{Score: score, Correct: correct, Missed: missed}, nil
}

// GradeOrder grades an order question. order[i] is the index into q.Steps
// of the step the learner placed at position i; order must be a permutation
// of 0..len(q.Steps)-1.
//
// Each position scores on its own: it is right when the step placed there
// equals the step that belongs there (so two identical steps may swap).
// Positions reports each position; the score is the fraction of right
// positions; Missed lists, for each wrong position, the step that belonged
// there, as [Step.String] formats it. The error wraps [ErrInvalidAnswer]
// when order has the wrong length, an index out of range or a repeated index.
func GradeOrder(q Question, order []int) (Result, error) {
	if q.Kind != KindOrder || len(q.Steps) == 0 {
		return Result{}, wrongKind(q, "GradeOrder")
	}
	if len(order) != len(q.Steps) {
		return Result{}, invalid(q, "the order must place all %d steps, got %d", len(q.Steps), len(order))
	}
	seen := make([]bool, len(q.Steps))
	for _, i := range order {
		if i < 0 || i >= len(q.Steps) {
			return Result{}, invalid(q, "step %d does not exist; the steps are 0 to %d", i, len(q.Steps)-1)
		}
		if seen[i] {
			return Result{}, invalid(q, "step %d is placed twice", i)
		}
		seen[i] = true
	}
	r := Result{Positions: make([]bool, len(order))}
	right := 0
	for pos, i := range order {
		if q.Steps[i] == q.Steps[pos] {
			r.Positions[pos] = true
			right++
		} else {
			r.Missed = append(r.Missed, q.Steps[pos].String())
		}
	}
	r.Score = float64(right) / float64(len(order))
	r.Correct = right == len(order)
	return r, nil
}

// GradeShort grades a short-answer question by the learner's own checklist:
// ticked[i] says the learner's answer made q.Points[i]. The score is the
// fraction ticked; Correct needs every point; Missed lists the points not
// ticked. The program never judges the typed text itself. The error wraps
// [ErrInvalidAnswer] when ticked does not have one entry per point.
func GradeShort(q Question, ticked []bool) (Result, error) {
	if q.Kind != KindShort || len(q.Points) == 0 {
		return Result{}, wrongKind(q, "GradeShort")
	}
	return gradeChecklist(q, q.Points, ticked)
}

func gradeChecklist(q Question, points []string, ticked []bool) (Result, error) {
	if len(ticked) != len(points) {
		return Result{}, invalid(q, "the checklist has %s, got %s", english.Plural(len(points), "point", ""), english.Plural(len(ticked), "tick", ""))
	}
	var r Result
	n := 0
	for i, t := range ticked {
		if t {
			n++
		} else {
			r.Missed = append(r.Missed, points[i])
		}
	}
	r.Score = float64(n) / float64(len(points))
	r.Correct = n == len(points)
	return r, nil
}

// GradeSpoken grades an interview drill answer like [GradeShort]: ticked[i]
// says the learner's answer (typed or spoken) made p.Points[i].
func GradeSpoken(p SpokenPrompt, ticked []bool) (Result, error) {
	if len(p.Points) == 0 {
		return Result{}, fmt.Errorf("quiz: %s: %w: the prompt has no key points", p.ID, ErrWrongKind)
	}
	return gradeChecklist(Question{ID: p.ID}, p.Points, ticked)
}

// GradeLive grades a live question: cause is an index into q.Choices (the
// candidate causes), where an index into q.Live.Where. Each is worth half
// the score; Correct needs both. Missed holds the right cause and the right
// place when the learner missed them. The error wraps [ErrInvalidAnswer] for
// an index out of range.
func GradeLive(q Question, cause, where int) (Result, error) {
	if q.Kind != KindLive || q.Live == nil || len(q.Correct) != 1 {
		return Result{}, wrongKind(q, "GradeLive")
	}
	if cause < 0 || cause >= len(q.Choices) {
		return Result{}, invalid(q, "cause %d does not exist; the causes are 0 to %d", cause, len(q.Choices)-1)
	}
	if where < 0 || where >= len(q.Live.Where) {
		return Result{}, invalid(q, "place %d does not exist; the places are 0 to %d", where, len(q.Live.Where)-1)
	}
	var r Result
	if cause == q.Correct[0] {
		r.Score += 0.5
	} else {
		r.Missed = append(r.Missed, q.Choices[q.Correct[0]])
	}
	if where == q.Live.WhereCorrect {
		r.Score += 0.5
	} else {
		r.Missed = append(r.Missed, q.Live.Where[q.Live.WhereCorrect])
	}
	r.Correct = r.Score == 1
	return r, nil
}

// Score is the score of an attempt at a set: the mean score of results, or
// 0 for none. A question left unanswered should be passed as a zero Result.
func Score(results []Result) float64 {
	if len(results) == 0 {
		return 0
	}
	sum := 0.0
	for _, r := range results {
		sum += r.Score
	}
	return sum / float64(len(results))
}
