package common

// What the app and its pages tell whoever runs them, and what may be sent
// to them from outside. A workshop's SSH session listens to the first and
// sends the second (see internal/workshop); the app alone ignores the
// first and never gets the second. Pages know nothing of SSH.

// Step moves the play screen on top one step forward, as n does; other
// pages ignore it. A presenter stepping the room together sends it to
// every attendee's app.
type Step struct{}

// Answered is told by a quiz page once the learner's answer to a question
// is graded: the set and question (quiz IDs), what the learner picked, and
// the score from 0 to 1. Picks are the options ticked (a choice question),
// the cause chosen (a live question), the learner's arrangement as indices
// into the steps (an order question) or the points ticked (a short
// answer). The root passes it to no page.
type Answered struct {
	Set, Question string
	Picks         []int
	Score         float64
}

func (Answered) rootMsg() {}
