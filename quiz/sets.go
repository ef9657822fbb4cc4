package quiz

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dustin/go-humanize/english"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/sim/engine"
)

// The pages the sets are built from (lessons.Get).
const (
	// LessonSlug is the lesson page "Idempotency".
	LessonSlug = "idempotency"
	// CardSlug is the interview card about retries on another API instance.
	CardSlug = "retry-across-instances"
)

// The set IDs: they key [Progress.Sets] and are stable across versions.
const (
	SetCheckpoint = "checkpoint"
	SetBreakIt    = "breakit"
	SetRedraw     = "redraw"
	// SetInterview records the spoken prompts of the interview drill.
	SetInterview = "interview"
)

// Set is a named list of questions the learner answers in one sitting.
type Set struct {
	// ID is one of SetCheckpoint, SetBreakIt, SetPredict, SetRedraw.
	ID string
	// Title names the set on the home screen, e.g. "Checkpoint".
	Title string
	// Intro is shown before the first question (plain text).
	Intro string
	// Questions in the order the set asks them.
	Questions []Question
}

// Question returns the question with the given ID, and whether there is one.
func (s Set) Question(id string) (Question, bool) {
	for _, q := range s.Questions {
		if q.ID == id {
			return q, true
		}
	}
	return Question{}, false
}

// Checkpoint is the lesson's five checkpoint questions, each in the kind
// that fits it: 1 short answer, 2 multiple choice, 3 to 5 single choice.
// The prompts are the lesson page's own; choices, models and explanations
// are quiz's, from the lesson's facts.
//
// Checkpoint panics if the embedded lesson page no longer has the shape
// the set relies on (five checkpoint questions); the package tests build
// every set, so a page edit that breaks it fails `go test` first.
func Checkpoint() Set { return checkpoint() }

// Redraw is the lost-answer sequence to rebuild from memory: one order
// question whose six steps (with who sends what to whom) are the messages
// of the lesson's "Picture it" sequence diagram, shown as [Frame]s without
// the words that give their place away, each with blanks to fill in: what
// its arrow carries. It panics like [Checkpoint] if the page's diagram
// changes shape or no longer says what a blank's right choice stands for.
func Redraw() Set { return redraw() }

// BreakIt is the debugging set: six live questions, the three symptoms of
// the lesson's Break it table and three more from the sim scenarios
// (another API instance, keys in Redis with a TTL, one key for two events).
// It panics like [Checkpoint] if the table changes shape.
func BreakIt() Set { return breakIt() }

// Sets returns Checkpoint, BreakIt, PredictSet and Redraw, in the order of
// the home menu.
func Sets() []Set { return []Set{Checkpoint(), BreakIt(), PredictSet(), Redraw()} }

// SetTitle returns the title of the set or drill with the given ID, or the
// ID itself when it is unknown.
func SetTitle(id string) string {
	switch id {
	case SetCheckpoint:
		return "Checkpoint"
	case SetBreakIt:
		return "Break it"
	case SetPredict:
		return "Predict, then run"
	case SetRedraw:
		return "Redraw it"
	case SetInterview:
		return "Interview drill"
	}
	return id
}

// The sets are built once per process from the embedded pages (about
// 3 ms for the four, on every start of the app and of its first frame
// before): callers read them and never change them.
var (
	checkpoint = sync.OnceValue(func() Set { return must(buildCheckpoint()) })
	redraw     = sync.OnceValue(func() Set { return must(buildRedraw()) })
	breakIt    = sync.OnceValue(func() Set { return must(buildBreakIt()) })
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// pages loads the lesson and the interview card.
func pages() (lesson, card *lessons.Page, err error) {
	if lesson, err = lessons.Get(LessonSlug); err != nil {
		return nil, nil, fmt.Errorf("quiz: %w", err)
	}
	if card, err = lessons.Get(CardSlug); err != nil {
		return nil, nil, fmt.Errorf("quiz: %w", err)
	}
	return lesson, card, nil
}

// shapeError says that a page no longer has what a set is built from.
func shapeError(p *lessons.Page, format string, args ...any) error {
	return fmt.Errorf("quiz: the page %q (lessons/pages/%s.md) changed shape: %s; update quiz to match",
		p.Title, p.Slug, fmt.Sprintf(format, args...))
}

// plain removes the Markdown markup used inside table cells and list items
// (code spans, strong emphasis) so that quiz text is plain.
var plain = strings.NewReplacer("`", "", "**", "").Replace

// checkpointCount is the number of questions of the lesson's Checkpoint.
const checkpointCount = 5

func buildCheckpoint() (Set, error) {
	lesson, _, err := pages()
	if err != nil {
		return Set{}, err
	}
	return checkpointFrom(lesson)
}

// checkpointFrom builds the Checkpoint set from the lesson page.
func checkpointFrom(lesson *lessons.Page) (Set, error) {
	if n := len(lesson.Checkpoint); n != checkpointCount {
		return Set{}, shapeError(lesson, "Checkpoint has %s, quiz has choices for %d", english.Plural(n, "question", ""), checkpointCount)
	}
	prompt := func(i int) string { return plain(lesson.Checkpoint[i]) }
	source := func(i int) string { return fmt.Sprintf("%s › Checkpoint %d", lesson.Title, i+1) }
	qs := []Question{
		{
			ID:     "checkpoint/1",
			Kind:   KindShort,
			Prompt: prompt(0),
			Model:  "A request is idempotent when sending it a second time has the same effect as sending it once: a repeated booking gets the first booking back and takes no seats again.",
			Points: []string{
				"Doing it twice has the same effect as doing it once",
				"It is about the effect on the server (rows, seats), not how often the request was sent",
				"For a booking: the repeat gets the first booking back and takes no more seats",
			},
			Cues: []Cue{
				{{"twice", "again", "repeat", "second", "more than once", "several", "multiple", "many times", "n times", "retr", "resen", "duplicat", "any number"},
					{"same", "identical", "unchanged", "no change", "no different", "nothing changes", "no extra", "no more", "as once", "only once", "just once", "one time", "no additional"}},
				{{"server", "database", "postgres", "stored", "state", "row", "seat", "data", "table", "side effect"}},
				{{"book"}, {"first", "same", "original", "existing", "earlier", "back", "only one", "one booking", "once"}},
			},
			Explain: "That is what makes the retry after a lost answer safe: the server already committed b1, and the repeat with the same key changes nothing and answers with b1 again.",
		},
		{
			ID:     "checkpoint/2",
			Kind:   KindMultiple,
			Prompt: prompt(1) + " Pick every true statement.",
			Choices: []string{
				"A new key on each retry, so the server can tell the tries apart",
				"A new key at the moment the user decides to book",
				"The same key again on each retry after a network error or a 5xx",
				"The same key again for every booking the user makes in a session",
				"A new key when the user changes the quantity of seats",
				"A new key after a lost answer, as the first try may not have counted",
			},
			Correct: []int{1, 2, 4},
			Explain: "The key belongs to the intent, not to the try (How it works, step 1). The form makes it when the user decides to book, every retry sends it again, and a changed quantity is a new intent with a new key (NewIntent in sim/client/client.go). A new key per retry is the bug that charges the user twice: the server cannot know the second try repeats the first.",
		},
		{
			ID:     "checkpoint/3",
			Kind:   KindSingle,
			Prompt: prompt(2),
			Choices: []string{
				"200 with the first booking of 2 seats, the same answer as for any replay",
				"200 with a new booking of 3 seats, since a new quantity makes it a new request",
				"409 Conflict: “" + engine.MsgKeyReused + "”",
				"409 Conflict: “" + engine.MsgNotEnoughSeats + "” for the one extra seat it now asks for",
				"400 Bad Request: a key sent again with a different quantity counts as malformed",
			},
			Correct: []int{2},
			Explain: "How it works, step 3: having found the booking for this user and key, the engine compares its event and quantity with the request. Both equal: a replay, 200 with the first booking. Either different: 409, and nothing is written. Answering 200 would hand back a booking of 2 seats to a request for 3.",
		},
		{
			ID:     "checkpoint/4",
			Kind:   KindSingle,
			Prompt: prompt(3),
			Choices: []string{
				"The key lookup alone: each copy checks for a booking with its key before it inserts anything, so the second copy always sees the first",
				"The UNIQUE (user_id, idempotency_key) constraint: both INSERT, the second fails with 23505, rolls back whole and replays the first",
				"The lock on the event row: they queue, the later one finds the first booking and replays it, and UNIQUE (user_id, idempotency_key) covers the rest",
				"The API instance that took the first copy keeps its key in its memory for a while, and refuses the second copy with a 409 Conflict",
			},
			Correct: []int{2},
			Explain: "How it works, step 4. A lookup alone cannot settle it: both copies may look before either has inserted (the broken Simultaneous copies: N rows). Copies of one request for one event queue on the event's row lock, so each later copy's lookup finds the first one's booking and replays it: no 23505 happens (learn play concurrent-copies). The UNIQUE (user_id, idempotency_key) constraint settles what the lock does not cover. One key sent for two events (two rows, two locks): one INSERT wins, the loser gets 23505, rolls back as a whole, its seat decrement too, and answers 409 “" + engine.MsgKeyReused + "”, not with the winner's booking (learn play key-reuse-two-events). Only in a design that looks the key up before locking do copies of one request reach the constraint; there the loser, rolled back the same way, answers with the winner's booking (learn play lookup-before-lock).",
		},
		{
			ID:     "checkpoint/5",
			Kind:   KindSingle,
			Prompt: prompt(4),
			Choices: []string{
				"Other writes never lose their answer on the way back, so no client needs to repeat them",
				"Only a booking can fail with a 5xx; the other writes answer 4xx, which are never retried",
				"The server retries the other writes itself, so the browser has nothing left to repeat",
				"Its idempotency key turns a repeat into a replay; any other write, sent twice, may apply twice",
			},
			Correct: []int{3},
			Explain: "The answer to any write can be lost after the server acted. The client retries a booking (at most 3 tries, after 1 s and 2 s, only on a network error or a 5xx) because its key turns the repeat into a replay. A write without a key cannot tell a repeat from a new request, so retrying it could apply it twice.",
		},
	}
	for i := range qs {
		qs[i].Source = source(i)
	}
	return Set{
		ID:        SetCheckpoint,
		Title:     SetTitle(SetCheckpoint),
		Intro:     "Five questions on the lesson, answered from memory. Each shows why after you answer; if one is hard, reread its section.",
		Questions: qs,
	}, nil
}

// StepsOf turns the messages of a sequence diagram into steps, with the
// participants' display names; the error names a message whose participant
// is not declared.
func StepsOf(seq *lessons.Sequence) ([]Step, error) {
	steps := make([]Step, 0, len(seq.Messages))
	for i, m := range seq.Messages {
		from, ok1 := seq.Participant(m.From)
		to, ok2 := seq.Participant(m.To)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("message %d (%s → %s) names an unknown participant", i+1, m.From, m.To)
		}
		steps = append(steps, Step{From: from.Name, To: to.Name, Text: plain(m.Text)})
	}
	return steps, nil
}
