package quiz

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dustin/go-humanize/english"
	"github.com/learn-idempotency/learn/lessons"
)

// Frame is one step of an order question as the learner sees it: the
// step's text without the words that would give its place away, with a
// blank for each thing its arrow carries, which the learner fills in from
// the blank's choices.
type Frame struct {
	// Text is the step's text with BlankMark where each blank goes, in
	// the order of Blanks, e.g. "book 2 seats, {}".
	Text string
	// Blanks are the blanks of Text, in order.
	Blanks []Blank
}

// BlankMark marks a blank in [Frame.Text].
const BlankMark = "{}"

// Blank is one thing an arrow carries: the status, the key, the booking,
// what is read or written under the lock, whether the answer arrives.
type Blank struct {
	// What names it, e.g. "status" or "under the lock".
	What string
	// Choices are what may fill it (plain text).
	Choices []string
	// Right is the index into Choices of what the step carries.
	Right int
}

// Fill is f's text with blank b replaced by fill(b).
func (f Frame) Fill(fill func(b int) string) string {
	parts := strings.Split(f.Text, BlankMark)
	var out strings.Builder
	for i, p := range parts {
		out.WriteString(p)
		if i < len(parts)-1 {
			out.WriteString(fill(i))
		}
	}
	return out.String()
}

// The choices of the redraw's blanks, each list the same for every step
// that has that blank, so that a step's blanks do not give its place away.
var (
	keyChoices     = []string{"the key K", "a new key K2"}
	lockChoices    = []string{"seats -2, insert b1", "key K has b1, write nothing", "seats -2, insert b2", "key K has b1, seats -2 again"}
	statusChoices  = []string{"200", "409", "500"}
	bookingChoices = []string{"booking b1", "booking b2", "no booking"}
	fateChoices    = []string{"lost on the way", "reaches the browser"}
)

// blankSpec is a blank of the redraw and what its right choice stands
// for in the diagram's message: says are words of the message's text
// (each in the right choice too), lost whether the arrow ends in a cross.
type blankSpec struct {
	what    string
	choices []string
	right   int
	says    []string
	fate    bool // the blank is whether the answer arrives: checked against the arrow
}

// redrawFrames are the six messages of the lesson's sequence diagram as
// the redraw shows them, in the diagram's order. The two requests, the
// two pieces of work under the lock and the two answers look alike: only
// the blanks, once filled in, tell them apart.
var redrawFrames = []struct {
	text   string
	blanks []blankSpec
}{
	{"book 2 seats, {}", []blankSpec{{what: "key", choices: keyChoices, right: 0, says: []string{"key K"}}}},
	{"under the lock: {}, COMMIT", []blankSpec{{what: "under the lock", choices: lockChoices, right: 0, says: []string{"b1", "seats -2"}}}},
	{"answer {} with {}, {}", []blankSpec{
		{what: "status", choices: statusChoices, right: 0, says: []string{"200"}},
		{what: "booking", choices: bookingChoices, right: 0, says: []string{"b1"}},
		{what: "on the way", choices: fateChoices, right: 0, fate: true},
	}},
	{"book 2 seats, {}", []blankSpec{{what: "key", choices: keyChoices, right: 0, says: []string{"key K"}}}},
	{"under the lock: {}, COMMIT", []blankSpec{{what: "under the lock", choices: lockChoices, right: 1, says: []string{"b1", "write nothing"}}}},
	{"answer {} with {}, {}", []blankSpec{
		{what: "status", choices: statusChoices, right: 0, says: []string{"200"}},
		{what: "booking", choices: bookingChoices, right: 0, says: []string{"b1"}},
		{what: "on the way", choices: fateChoices, right: 1, fate: true},
	}},
}

// saysWords reports whether text holds words as whole words: "key K" is
// in "book 2 seats, key K" but not in "key K2".
func saysWords(text, words string) bool {
	return regexp.MustCompile(`(^|[^\pL\pN])` + regexp.QuoteMeta(words) + `($|[^\pL\pN])`).MatchString(text)
}

func buildRedraw() (Set, error) {
	lesson, _, err := pages()
	if err != nil {
		return Set{}, err
	}
	return redrawFrom(lesson)
}

// redrawFrom builds the Redraw set from the lesson page: the steps are the
// diagram's messages; the frames and blanks are quiz's, each blank's right
// choice checked against the message it belongs to.
func redrawFrom(lesson *lessons.Page) (Set, error) {
	seq := lesson.Sequence
	if seq == nil || len(seq.Messages) != len(redrawFrames) {
		n := 0
		if seq != nil {
			n = len(seq.Messages)
		}
		return Set{}, shapeError(lesson, "the sequence diagram has %s, want %d (book, commit, lost answer, retry, lookup, same answer)", english.Plural(n, "message", ""), len(redrawFrames))
	}
	steps, err := StepsOf(seq)
	if err != nil {
		return Set{}, shapeError(lesson, "%v", err)
	}
	frames := make([]Frame, len(redrawFrames))
	for i, rf := range redrawFrames {
		m := seq.Messages[i]
		f := Frame{Text: rf.text}
		if n := strings.Count(rf.text, BlankMark); n != len(rf.blanks) {
			return Set{}, fmt.Errorf("quiz: redraw step %d has %d blanks in %q and %d blanks", i+1, n, rf.text, len(rf.blanks))
		}
		for _, b := range rf.blanks {
			right := b.choices[b.right]
			for _, w := range b.says {
				if !saysWords(plain(m.Text), w) || !saysWords(right, w) {
					return Set{}, shapeError(lesson, "message %d (%q) should say %q, which the redraw's %s blank stands for (%q)", i+1, m.Text, w, b.what, right)
				}
			}
			if b.fate && (b.right == 0) != m.Lost {
				return Set{}, shapeError(lesson, "message %d (%q): the redraw has its answer %s", i+1, m.Text, right)
			}
			f.Blanks = append(f.Blanks, Blank{What: b.what, Choices: b.choices, Right: b.right})
		}
		frames[i] = f
	}
	return Set{
		ID:    SetRedraw,
		Title: SetTitle(SetRedraw),
		Intro: "Rebuild the sequence of the lesson from memory: who sends what, in which order, and what each arrow carries.",
		Questions: []Question{{
			ID:      "redraw/lost-answer",
			Kind:    KindOrder,
			Prompt:  "The lost answer, from memory: put the six steps in order, then fill in what each arrow carries (the key, what is written under the lock, the status and booking of each answer, and whether it arrives).",
			Steps:   steps,
			Frames:  frames,
			Explain: "The booking commits (b1, 2 seats) and only then is its answer lost. The retry carries the same key K; under the lock on the event row the engine finds b1 for this user and key and writes nothing, so the browser finally gets the answer it missed, 200 with b1: 1 booking, 2 seats.",
			Source:  lesson.Title + " › Picture it",
		}},
	}, nil
}
