package workshop

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// feedHas waits until a line of w's feed contains want.
func feedHas(t *testing.T, w *Workshop, want string) {
	t.Helper()
	waitUntil(t, "the feed line "+want, func() string {
		var lines []string
		for _, e := range w.Room().Snapshot(50).Feed {
			lines = append(lines, e.Text)
		}
		return strings.Join(lines, "\n")
	}, func(s string) bool { return strings.Contains(s, want) })
}

// sendQuestion does what the dashboard's o does for question i of the
// checkpoint: open the poll on it and send the room there.
func sendQuestion(w *Workshop, i int) {
	q := quiz.Checkpoint().Questions[i]
	w.Room().OpenPoll(quiz.SetCheckpoint, q.ID)
	w.Room().SendAll(common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: i}, Exact: true}, "sent everyone to a question")
}

// The presenter's question is the one on every attendee's screen, the
// first included, whatever they answered before (an unfinished attempt
// does not move it); their answer then fills the poll.
func TestAttendeeLandsOnTheQuestionSent(t *testing.T) {
	w := startWorkshop(t, Config{})
	ada := attend(t, w, "ada", 100, 30, "", nil)
	ada.waitFor("Lesson: Idempotency")

	sendQuestion(w, 1) // Checkpoint 2: multiple choice
	ada.waitFor("question 2 of 5")
	ada.press("space", "enter")
	feedHas(t, w, "ada answered Checkpoint 2")

	sendQuestion(w, 3)
	ada.waitFor("question 4 of 5")
	sendQuestion(w, 0)
	ada.waitFor("question 1 of 5", "tab when done")

	ada.press("s", "a", "m", "e", "tab", "space", "enter")
	feedHas(t, w, "ada answered Checkpoint 1")
	p := w.Room().Snapshot(0).Poll
	if b, _ := json.Marshal(p); p == nil || p.Title != "Checkpoint 1" || p.Answered != 1 || len(p.Waiting) != 0 {
		t.Errorf("the poll on Checkpoint 1 after ada's answer: %s", b)
	}

	// Sent to the question she is on after the last one: the summary of
	// the set is not that question.
	sendQuestion(w, 4)
	ada.waitFor("question 5 of 5")
	ada.press("space", "enter")
	feedHas(t, w, "ada answered Checkpoint 5")
	ada.press("enter")
	waitUntil(t, "the set's summary", ada.screen, func(s string) bool { return !strings.Contains(s, "question 5 of 5") })
	sendQuestion(w, 4)
	ada.waitFor("question 5 of 5")
}

// An attendee's progress, as they export it, as the summary holds it and
// as they are shown it at the end, says when it last changed, as the
// progress file of a local learn does.
func TestKeptProgressSaysWhenItChanged(t *testing.T) {
	w := startWorkshop(t, Config{})
	ada := attend(t, w, "ada", 100, 30, "", nil)
	ada.waitFor("Lesson: Idempotency")
	before := time.Now().UTC()
	sendQuestion(w, 2)
	ada.waitFor("question 3 of 5")
	ada.press("enter")
	feedHas(t, w, "ada answered Checkpoint 3")
	after := time.Now().UTC()
	inTime := func(where string, data []byte) {
		t.Helper()
		var p progress.Progress
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatalf("%s: %v\n%s", where, err, data)
		}
		if p.UpdatedAt.Before(before) || p.UpdatedAt.After(after) {
			t.Errorf("%s: updated_at %v, want the time of ada's answer, between %v and %v", where, p.UpdatedAt, before, after)
		}
	}

	c, err := dial(w, "ada", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Output("progress")
	if err != nil {
		t.Fatalf("progress: %v", err)
	}
	inTime("the export", out)

	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	inTime("the summary", sum.Attendees[0].Progress)
	if err := ada.ended(); err != nil {
		t.Fatalf("ada's session: %v", err)
	}
	_, shown, ok := strings.Cut(ada.raw.String(), "to keep if you like:")
	if !ok {
		t.Fatalf("ada was not shown her progress; the end of her output: %q", tail(ada.raw.String()))
	}
	inTime("the progress shown at the end", []byte(strings.TrimSpace(strings.ReplaceAll(shown, "\r", ""))))
}
