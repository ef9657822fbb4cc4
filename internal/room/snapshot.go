package room

import (
	"slices"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// Snapshot is the room as it stands at one moment, for the presenter's
// dashboard: a copy that the room no longer changes.
type Snapshot struct {
	Max     int
	Started time.Time
	// Attendees are the connected ones in the order they came, then those
	// who left.
	Attendees []Attendee
	// Poll is the open question's poll, else the poll the presenter
	// closed (as it stood then), else that of the question answered last;
	// nil before any of those.
	Poll *Poll
	// Feed is the newest lines of the feed, oldest first.
	Feed  []Entry
	Ended bool
}

// Connected is how many attendees of the snapshot are connected.
func (s Snapshot) Connected() int {
	n := 0
	for _, a := range s.Attendees {
		if a.Connected {
			n++
		}
	}
	return n
}

// Attendee is one attendee as the dashboard shows them.
type Attendee struct {
	Name   string
	Remote string
	// Width x Height is the size their app is drawn at, in cells.
	Width, Height int
	// Capped says their terminal is larger than Width x Height, the size
	// their app is drawn at (the workshop's bound).
	Capped bool
	// At is the place they are on (which screen, and where on it);
	// Title that screen's title, in words for the presenter.
	Title     string
	At        progress.Place
	Connected bool
	Joined    time.Time
	Left      time.Time // zero while connected
	// Checkpoint and BreakIt are their scores so far in those sets.
	Checkpoint, BreakIt Score
}

// Score is an attendee's record in one set: how many of its Of questions
// they answered, and the sum of those answers' scores (each 0 to 1).
type Score struct {
	Answered, Of int
	Points       float64
}

// Percent is the share of the points of the questions answered, 0 to 100.
func (s Score) Percent() float64 {
	if s.Answered == 0 {
		return 0
	}
	return 100 * s.Points / float64(s.Answered)
}

// Poll is the room's answers to one question.
type Poll struct {
	Set, Question string // the quiz IDs
	Title         string // "Checkpoint 3"
	Prompt        string
	Kind          quiz.Kind
	// Opened says the presenter opened this question; Closed that the
	// presenter closed it (the counts are those at the close); neither,
	// that it is the question answered last.
	Opened, Closed bool
	// Bars are the answers' distribution: one bar a choice for a choice or
	// live question (an attendee who picked several counts in each), else
	// right, partly right and wrong.
	Bars []Bar
	// Answered is how many attendees answered; Waiting names the connected
	// ones who have not (when Closed: who had not at the close).
	Answered int
	Waiting  []string
}

// Bar is one bar of a poll.
type Bar struct {
	Label   string
	Count   int
	Correct bool // the right choice
}

// Snapshot copies the room as it stands now, with at most feed lines of
// the feed.
func (r *Room) Snapshot(feed int) Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	snap := Snapshot{Max: r.max, Started: r.started, Ended: r.ended}
	for _, connected := range []bool{true, false} {
		for _, s := range r.seats {
			if s.connected == connected {
				snap.Attendees = append(snap.Attendees, r.attendeeLocked(s))
			}
		}
	}
	snap.Poll = r.shownLocked()
	snap.Feed = slices.Clone(r.feed[max(0, len(r.feed)-feed):])
	return snap
}

// shownLocked is the poll the presenter sees, a copy: the question opened;
// else the poll closed, as it stood when closed; else the question
// answered last; nil when none.
func (r *Room) shownLocked() *Poll {
	if r.poll == nil && r.closed != nil {
		p := *r.closed
		p.Bars, p.Waiting = slices.Clone(p.Bars), slices.Clone(p.Waiting)
		return &p
	}
	k, opened := r.poll, true
	if k == nil {
		k, opened = r.lastAsked, false
	}
	if k == nil {
		return nil
	}
	q, ok := r.question(*k)
	if !ok {
		return nil
	}
	return r.pollLocked(q, opened)
}

func (r *Room) attendeeLocked(s *Seat) Attendee {
	a := Attendee{Name: s.name, Remote: s.remote, Width: s.width, Height: s.height, Capped: s.capped, Title: s.title, At: s.at,
		Connected: s.connected, Joined: s.joined, Left: s.left}
	a.Checkpoint = r.scoreLocked(s, quiz.SetCheckpoint)
	a.BreakIt = r.scoreLocked(s, quiz.SetBreakIt)
	return a
}

// scoreLocked is s's record in the set id.
func (r *Room) scoreLocked(s *Seat, id string) Score {
	var sc Score
	for _, set := range r.sets {
		if set.ID != id {
			continue
		}
		sc.Of = len(set.Questions)
		for _, q := range set.Questions {
			if a, ok := s.answers[pollKey{id, q.ID}]; ok {
				sc.Answered++
				sc.Points += a.Score
			}
		}
	}
	return sc
}

// pollLocked is the room's answers to q.
func (r *Room) pollLocked(q question, opened bool) *Poll {
	k := pollKey{q.set.ID, q.ID}
	p := &Poll{Set: k.set, Question: k.question, Title: q.title(), Prompt: q.Prompt, Kind: q.Kind, Opened: opened}
	byChoice := len(q.Choices) > 0 && (q.Kind == quiz.KindSingle || q.Kind == quiz.KindMultiple || q.Kind == quiz.KindLive)
	if byChoice {
		for i, c := range q.Choices {
			p.Bars = append(p.Bars, Bar{Label: strings.TrimSpace(c), Correct: slices.Contains(q.Correct, i)})
		}
	} else {
		p.Bars = []Bar{{Label: "right", Correct: true}, {Label: "partly right"}, {Label: "wrong"}}
	}
	for _, s := range r.seats {
		a, ok := s.answers[k]
		if !ok {
			if s.connected {
				p.Waiting = append(p.Waiting, s.name)
			}
			continue
		}
		p.Answered++
		if byChoice {
			for _, i := range a.Picks {
				if i >= 0 && i < len(p.Bars) {
					p.Bars[i].Count++
				}
			}
			continue
		}
		switch {
		case a.Score >= 1:
			p.Bars[0].Count++
		case a.Score > 0:
			p.Bars[1].Count++
		default:
			p.Bars[2].Count++
		}
	}
	return p
}
