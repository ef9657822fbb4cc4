package quiz

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dustin/go-humanize/english"
	"github.com/learn-idempotency/learn/sim"
)

// Kind is the kind of a question; it says which fields of [Question] are
// used and which grader applies.
type Kind string

// The kinds of question.
const (
	// KindSingle is single choice: Choices and exactly one index in
	// Correct; graded by [GradeChoice]. The UI shows the choices in a new
	// order on every attempt ([ShowOrder]).
	KindSingle Kind = "single"
	// KindMultiple is multiple choice: Choices and one or more indices in
	// Correct; graded by [GradeChoice] with partial credit. Shown shuffled
	// as KindSingle.
	KindMultiple Kind = "multiple"
	// KindOrder asks for Steps in their order and, when the question has
	// Frames, for the blanks of each step; graded per position and per
	// blank by [GradeOrder]. The UI shows the steps in the order
	// [ShowOrder] gives, as their Frames when there are any.
	KindOrder Kind = "order"
	// KindShort is a short answer the learner types, then compares with
	// Model and grades by ticking Points; graded by [GradeShort], which
	// checks each tick against the typed text (Cues): a point ticked but
	// not mentioned counts half.
	KindShort Kind = "short"
	// KindLive runs a sim scenario on PostgreSQL (the screens run it through
	// internal/live), shows the symptom as numbers ([SymptomOf]), and asks
	// for the cause (Choices, Correct) and where to look (Live.Where);
	// graded by [GradeLive]. The causes and the places are each shown in
	// an order of their own, new on every attempt ([ShowOrder]).
	KindLive Kind = "live"
	// KindPredict asks, before a sim scenario runs on PostgreSQL, for a
	// prediction of what it will show (Predict.Slots: the answers, the
	// booking rows, the seats taken, the guard that acts), then runs it
	// (the screens run it through internal/live) and grades the prediction
	// from the run's own report; graded by [GradePredict].
	KindPredict Kind = "predict"
)

// Question is one question of a [Set]. Questions are plain values built by
// this package; treat the slices as read-only.
type Question struct {
	// ID is stable across versions of learn and keys the learner's saved
	// answers, e.g. "checkpoint/3" or "breakit/charged-twice".
	ID   string
	Kind Kind
	// Prompt is the question as the learner reads it (plain text).
	Prompt string
	// Choices are the options of a single or multiple choice question, and
	// the candidate causes of a live question (plain text).
	Choices []string
	// Correct holds the indices into Choices of the right options, in
	// increasing order: exactly one for single choice and live questions.
	Correct []int
	// Explain is shown after the learner has answered, whatever the result.
	Explain string
	// Steps are the steps of an order question in their right order.
	Steps []Step
	// Frames, when set, are Steps as the learner sees them, one for each
	// step: without the words that give its place away, with blanks to
	// fill in.
	Frames []Frame
	// Model is the model answer of a short-answer question.
	Model string
	// Points are the key points of Model that the learner ticks when their
	// own answer made them.
	Points []string
	// Cues say, for each of Points, in which words a typed answer makes
	// it ([Mentions]).
	Cues []Cue
	// Live is set for live questions only.
	Live *Live
	// Predict is set for predict questions only.
	Predict *Predict
	// Source names where the question comes from, e.g.
	// "Idempotency › Checkpoint 3".
	Source string
}

// Step is one step of a sequence: who sends what to whom. From equals To for
// work done inside one lane (e.g. the API committing a booking).
type Step struct {
	From, To, Text string
}

// String formats the step as "Browser → API + Postgres: book 2 seats, key K",
// or "API + Postgres: booked b1, …" when From equals To.
func (s Step) String() string {
	if s.From == s.To {
		return s.From + ": " + s.Text
	}
	return s.From + " → " + s.To + ": " + s.Text
}

// Live is what a live question runs and what its run must show.
//
// The learner first sees the run of Variant (the symptom), answers, and then
// sees the run of Beside next to it. For most questions Variant is
// sim.Broken and Beside is sim.Correct: the broken design shows the symptom
// and the correct one shows the fix. The exception is breakit/key-already-used:
// the lesson's symptom there (409 "This idempotency key was already used for
// a different booking") is the correct engine refusing a client that reused a
// key for another quantity, so the symptom comes from sim.Correct, and Beside
// is sim.Broken, an engine without the comparison, which answers 200 with the
// wrong booking; BesideNote says so.
type Live struct {
	// Scenario is the sim scenario's name (sim.Lookup).
	Scenario string
	// Variant is the variant whose run shows the symptom. Always set.
	Variant sim.Variant
	// Beside is the variant run after the answer, to compare with. Always
	// set, and different from Variant.
	Beside sim.Variant
	// BesideNote says what the Beside run shows (plain text).
	BesideNote string
	// Symptom is what the learner is told before the run (plain text).
	Symptom string
	// Where are the candidate places to look (plain text).
	Where []string
	// WhereCorrect is the index into Where of the right place: the one
	// the verdict's "where to look" names first.
	WhereCorrect int
	// WhereAlso are indices into Where of other places that are as right,
	// graded as WhereCorrect is (for a key kept outside the row, the
	// schema's missing constraint is as much the fault as the store).
	WhereAlso []int
	// Claim is what the run of Variant gives; a test checks it on a real
	// PostgreSQL.
	Claim Claim
}

// Claim is what a run of a live question's Variant must show, field by
// field as [Symptom] reports it. A test runs every live question on a real
// PostgreSQL and checks its claim with [Claim.Check].
type Claim struct {
	// Statuses are the HTTP statuses of the answers that reached the
	// browser, sorted ascending.
	Statuses []int
	// Messages are the distinct error messages of those answers, sorted.
	Messages []string
	// Lost is the number of answers lost on the way back.
	Lost int
	// Intents is the number of booking intents (clicks); Keys the number of
	// distinct idempotency keys sent; Tries the number of requests sent.
	Intents, Keys, Tries int
	// Rows is the number of booking rows afterwards; Seats the seats taken.
	Rows, Seats int
	// Broken are the names of the invariants the run breaks (sim.Inv…), in
	// sim's order; empty when all hold.
	Broken []string
}

// Check returns nil when s shows exactly what c claims, or an error that
// lists every difference.
func (c Claim) Check(s Symptom) error {
	var diffs []string
	if !slices.Equal(c.Statuses, s.Statuses) {
		diffs = append(diffs, fmt.Sprintf("statuses %v, claimed %v", s.Statuses, c.Statuses))
	}
	if !slices.Equal(c.Messages, s.Messages) {
		diffs = append(diffs, fmt.Sprintf("messages %q, claimed %q", s.Messages, c.Messages))
	}
	for _, n := range []struct {
		one, many  string // many is "" where english.PluralWord's rule fits
		got, claim int
	}{
		{"answer lost", "answers lost", s.Lost, c.Lost},
		{"intent", "", s.Intents, c.Intents},
		{"key", "", s.Keys, c.Keys},
		{"try", "", s.Tries, c.Tries},
		{"booking row", "", s.Rows, c.Rows},
		{"seat taken", "seats taken", s.Seats, c.Seats},
	} {
		if n.got != n.claim {
			diffs = append(diffs, fmt.Sprintf("%s, claimed %d", english.Plural(n.got, n.one, n.many), n.claim))
		}
	}
	if !slices.Equal(c.Broken, s.Broken) {
		diffs = append(diffs, fmt.Sprintf("broken invariants %q, claimed %q", s.Broken, c.Broken))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("the run does not show what the question claims: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// Result is the grade of one answer.
type Result struct {
	// Score is from 0 (nothing right) to 1 (all right).
	Score float64
	// Correct is true when the answer is entirely right (Score is 1).
	Correct bool
	// Positions, for order questions, says for each position whether the
	// learner put the right step there; for predict questions, whether
	// each prediction (slot) was right.
	Positions []bool
	// Blanks, for order questions with frames, says for each position and
	// each blank of the frame placed there whether it was filled in right.
	Blanks [][]bool
	// Missed lists, as the learner reads them, what the answer lacked: the
	// right choices not picked, the right cause or place when missed, the
	// steps that belonged at the wrong positions, the key points not ticked.
	Missed []string
	// Unsaid, for short and spoken answers, lists the key points the
	// learner ticked that their typed answer does not mention: each
	// counted [UnsaidCredit].
	Unsaid []string
}
