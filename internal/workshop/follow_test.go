package workshop

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
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
	w.Room().SendAll(common.Open{Page: common.PageQuiz, Name: quiz.SetCheckpoint, Step: i, Exact: true}, "sent everyone to a question")
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
