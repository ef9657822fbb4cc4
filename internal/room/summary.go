package room

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/quiz"
)

// Summary is the room's progress, for the file the presenter keeps:
// every attendee who came, their scores, their answers and their whole
// progress (in the format of learn progress export). It is kept on disk
// as the workshop goes (Saved: when this copy was taken) and written a
// last time at its end (Ended); a copy without Ended is of a workshop
// still running, or one that never ended (killed, crashed).
type Summary struct {
	Started   time.Time         `json:"started"`
	Ended     time.Time         `json:"ended,omitzero"`
	Saved     time.Time         `json:"saved,omitzero"`
	Attendees []SummaryAttendee `json:"attendees"`
}

// SummaryAttendee is one attendee in the summary.
type SummaryAttendee struct {
	Name       string    `json:"name"`
	FirstCame  time.Time `json:"first_joined"`
	LastLeft   time.Time `json:"last_left,omitzero"`
	Sessions   int       `json:"sessions"`
	LastScreen string    `json:"last_screen"`
	// Scores maps a set ID (checkpoint, breakit, redraw) to the record.
	Scores   map[string]SummaryScore `json:"scores"`
	Answers  []Answer                `json:"answers"`
	Progress json.RawMessage         `json:"progress,omitempty"`
}

// SummaryScore is an attendee's record in one set: questions answered of
// the set's, and the mean score of those answered (0 to 1).
type SummaryScore struct {
	Answered int     `json:"answered"`
	Of       int     `json:"of"`
	Score    float64 `json:"score"`
}

// Summary is the room's summary now, ended at ended (zero: not ended).
func (r *Room) Summary(ended time.Time) Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum := Summary{Started: r.started, Ended: ended, Attendees: []SummaryAttendee{}}
	for _, s := range r.seats {
		a := SummaryAttendee{Name: s.name, LastLeft: s.left, Sessions: s.sessions, LastScreen: s.title,
			Scores: map[string]SummaryScore{}, Answers: []Answer{}, Progress: slices.Clone(s.progress)}
		a.FirstCame = s.firstJoined
		for _, id := range []string{quiz.SetCheckpoint, quiz.SetBreakIt, quiz.SetPredict, quiz.SetRedraw} {
			sc := r.scoreLocked(s, id)
			a.Scores[id] = SummaryScore{Answered: sc.Answered, Of: sc.Of, Score: sc.Percent() / 100}
		}
		for _, ans := range s.answers {
			a.Answers = append(a.Answers, ans)
		}
		slices.SortFunc(a.Answers, func(x, y Answer) int {
			return strings.Compare(x.Set+"\x00"+x.Question, y.Set+"\x00"+y.Question)
		})
		sum.Attendees = append(sum.Attendees, a)
	}
	return sum
}
