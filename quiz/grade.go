package quiz

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

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
// of the step the learner placed at position i; order must be a
// permutation of 0..len(q.Steps)-1. For a question with Frames, fills[i]
// holds the learner's pick for each blank of the frame placed at position
// i (an index into that blank's Choices); a question without Frames takes
// nil fills.
//
// Each position and each blank scores a point on its own. A position is
// right when the step placed there looks like the one that belongs there
// (the same lanes and text, or frame: two steps that look alike may
// swap). A blank is right when its position is right and its pick is the
// right choice of the step that belongs there. The score is the points
// over the positions and blanks; Positions and Blanks report each. Missed
// lists, for each wrong position, the position and the step that belonged
// there, as [Step.String] formats it ("1. Browser → API + Postgres: book 2
// seats, key K"), and for each wrong blank at a right position "5. under
// the lock: key K has b1, write nothing (not seats -2, insert b2)". The error wraps [ErrInvalidAnswer] when order has the wrong
// length, an index out of range or a repeated index, or fills does not
// fit the frames.
func GradeOrder(q Question, order []int, fills [][]int) (Result, error) {
	if q.Kind != KindOrder || len(q.Steps) == 0 || (len(q.Frames) > 0 && len(q.Frames) != len(q.Steps)) {
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
	if err := checkFills(q, order, fills); err != nil {
		return Result{}, err
	}
	r := Result{Positions: make([]bool, len(order))}
	right, points := 0, len(order)
	for pos, i := range order {
		if q.looksLike(i, pos) {
			r.Positions[pos] = true
			right++
		} else {
			r.Missed = append(r.Missed, fmt.Sprintf("%d. %s", pos+1, q.Steps[pos]))
		}
		if len(q.Frames) == 0 {
			continue
		}
		want := q.Frames[pos]
		got := make([]bool, len(q.Frames[i].Blanks))
		points += len(want.Blanks)
		for b, pick := range fills[pos] {
			if !r.Positions[pos] {
				continue // the blanks of a step in the wrong place
			}
			w := want.Blanks[b]
			picked := q.Frames[i].Blanks[b].Choices[pick]
			if picked == w.Choices[w.Right] {
				got[b] = true
				right++
			} else {
				r.Missed = append(r.Missed, fmt.Sprintf("%d. %s: %s (not %s)", pos+1, w.What, w.Choices[w.Right], picked))
			}
		}
		r.Blanks = append(r.Blanks, got)
	}
	r.Score = float64(right) / float64(points)
	r.Correct = right == points
	return r, nil
}

// looksLike reports whether step i looks like step j on screen: the same
// lanes and text, or the same lanes and frame when q has frames.
func (q Question) looksLike(i, j int) bool {
	if len(q.Frames) == 0 {
		return q.Steps[i] == q.Steps[j]
	}
	a, b := q.Steps[i], q.Steps[j]
	return a.From == b.From && a.To == b.To && q.Frames[i].Text == q.Frames[j].Text
}

// checkFills checks that fills has a pick in range for every blank of the
// frame at each position, or is nil for a question without frames.
func checkFills(q Question, order []int, fills [][]int) error {
	if len(q.Frames) == 0 {
		if fills != nil {
			return invalid(q, "the question has no blanks to fill")
		}
		return nil
	}
	if len(fills) != len(order) {
		return invalid(q, "the blanks of %s must be filled, got %d", english.Plural(len(order), "position", ""), len(fills))
	}
	for pos, i := range order {
		blanks := q.Frames[i].Blanks
		if len(fills[pos]) != len(blanks) {
			return invalid(q, "position %d has %s to fill, got %d", pos+1, english.Plural(len(blanks), "blank", ""), len(fills[pos]))
		}
		for b, pick := range fills[pos] {
			if pick < 0 || pick >= len(blanks[b].Choices) {
				return invalid(q, "position %d, %s: choice %d does not exist", pos+1, blanks[b].What, pick)
			}
		}
	}
	return nil
}

// GradeShort grades a short-answer question by the learner's checklist,
// checked against what they typed: ticked[i] says the learner holds that
// their answer made q.Points[i], and typed is their answer. A ticked point
// scores 1 when typed mentions it (q.Cues[i], see [Mentions]) and
// [UnsaidCredit] when it does not; a point not ticked scores 0. The score
// is the mean over the points; Correct needs every point ticked and
// mentioned. Missed lists the points not ticked; Unsaid the points ticked
// that typed does not mention. The error wraps [ErrInvalidAnswer] when
// ticked does not have one entry per point, and [ErrWrongKind] when the
// question has no points or not one cue per point.
func GradeShort(q Question, typed string, ticked []bool) (Result, error) {
	if q.Kind != KindShort || len(q.Points) == 0 || len(q.Cues) != len(q.Points) {
		return Result{}, wrongKind(q, "GradeShort")
	}
	return gradeChecklist(q, q.Points, ticked, Mentions(typed, q.Cues))
}

// gradeChecklist scores ticked against points; mentioned[i] says the
// typed answer makes point i (nil: an answer given aloud, graded by the
// ticks alone).
func gradeChecklist(q Question, points []string, ticked, mentioned []bool) (Result, error) {
	if len(ticked) != len(points) {
		return Result{}, invalid(q, "the checklist has %s, got %s", english.Plural(len(points), "point", ""), english.Plural(len(ticked), "tick", ""))
	}
	var r Result
	sum := 0.0
	for i, t := range ticked {
		switch {
		case !t:
			r.Missed = append(r.Missed, points[i])
		case mentioned == nil || mentioned[i]:
			sum++
		default:
			sum += UnsaidCredit
			r.Unsaid = append(r.Unsaid, points[i])
		}
	}
	r.Score = sum / float64(len(points))
	r.Correct = len(r.Missed) == 0 && len(r.Unsaid) == 0
	return r, nil
}

// GradeSpoken grades an interview drill answer. An answer typed (typed
// holds more than white space) is graded like [GradeShort], by the ticks
// checked against p.Cues. An answer given aloud (nothing typed) has
// nothing to check: it is graded by the learner's ticks alone, each ticked
// point worth 1. The errors are [GradeShort]'s.
func GradeSpoken(p SpokenPrompt, typed string, ticked []bool) (Result, error) {
	if len(p.Points) == 0 || len(p.Cues) != len(p.Points) {
		return Result{}, fmt.Errorf("quiz: %s: %w: the prompt needs key points, and a cue for each", p.ID, ErrWrongKind)
	}
	var mentioned []bool
	if strings.TrimSpace(typed) != "" {
		mentioned = Mentions(typed, p.Cues)
	}
	return gradeChecklist(Question{ID: p.ID}, p.Points, ticked, mentioned)
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
	if where == q.Live.WhereCorrect || slices.Contains(q.Live.WhereAlso, where) {
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
