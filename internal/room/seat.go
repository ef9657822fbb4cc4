package room

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/learn-idempotency/learn/progress"
)

// Seat is one attendee in the room: their session tells the room through
// it where they are and what they answered. Its fields are guarded by the
// room's mutex; its methods are safe for concurrent use.
type Seat struct {
	room *Room
	name string

	connected     bool
	remote        string
	width, height int
	capped        bool           // the terminal is larger than width x height
	title         string         // the title of the screen on top, in words
	at            progress.Place // the place on screen: which screen, and where
	joined, left  time.Time
	firstJoined   time.Time
	sessions      int
	answers       map[pollKey]Answer
	progress      []byte // the attendee's progress as JSON, as the room kept it last
	outbox        chan any
}

// Answer is an attendee's latest answer to one question.
type Answer struct {
	Set      string    `json:"set"`
	Question string    `json:"question"`
	Picks    []int     `json:"picks,omitempty"`
	Score    float64   `json:"score"`
	At       time.Time `json:"at"`
}

// Name is the attendee's name in the room (made unique while connected).
func (s *Seat) Name() string { return s.name }

// Resize records the size w x h (in cells) the attendee's app is drawn
// at; capped says their terminal is larger (the workshop bounds the size
// it draws at).
func (s *Seat) Resize(w, h int, capped bool) {
	s.room.mu.Lock()
	defer s.room.mu.Unlock()
	if s.width == w && s.height == h && s.capped == capped {
		return
	}
	s.width, s.height, s.capped = w, h, capped
	s.room.changedLocked()
}

// Where records the place the attendee is on (the screen and where on
// it) and the screen's title, which the presenter reads.
func (s *Seat) Where(title string, at progress.Place) {
	s.room.mu.Lock()
	defer s.room.mu.Unlock()
	if s.title == title && s.at == at {
		return
	}
	s.title, s.at = title, at
	s.room.changedLocked()
}

// Answered records the attendee's answer to question qid of set: the
// options picked and the score from 0 to 1. The poll follows the question
// answered last unless the presenter opened one.
func (s *Seat) Answered(set, qid string, picks []int, score float64) {
	r := s.room
	r.mu.Lock()
	defer r.mu.Unlock()
	k := pollKey{set, qid}
	q, ok := r.question(k)
	if !ok {
		return
	}
	s.answers[k] = Answer{Set: set, Question: qid, Picks: slices.Clone(picks), Score: score, At: r.now()}
	r.lastAsked = &k
	verdict := "wrong"
	switch {
	case score >= 1:
		verdict = "right"
	case score > 0:
		verdict = "partly right"
	}
	r.logLocked("%s answered %s: %s", s.name, q.title(), verdict)
}

// Keep keeps a copy of the attendee's progress for the rest of the
// workshop: it outlives their session, and Progress gives it back.
func (s *Seat) Keep(p *progress.Progress) {
	// As learn progress export writes it, so that the export from the
	// workshop is the same file.
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return // a Progress always marshals; nothing to keep otherwise
	}
	b = append(b, '\n')
	s.room.mu.Lock()
	defer s.room.mu.Unlock()
	s.progress = b
	s.room.keptLocked()
}

// Progress is the attendee's progress as the room kept it (a new one when
// it kept none): a copy the session may change.
func (s *Seat) Progress() *progress.Progress {
	s.room.mu.Lock()
	b := s.progress
	s.room.mu.Unlock()
	p := progress.NewProgress()
	if b != nil {
		if err := json.Unmarshal(b, p); err != nil {
			return progress.NewProgress()
		}
	}
	return p
}

// Leave takes the attendee out of the room (their record stays, for the
// summary and for their return); their app gets no more messages. Safe to
// call twice.
func (s *Seat) Leave(why string) {
	r := s.room
	r.mu.Lock()
	defer r.mu.Unlock()
	if !s.connected {
		return
	}
	s.connected, s.left = false, r.now()
	close(s.outbox)
	r.logLocked("%s left after %s: %s", s.name, Lasted(s.left.Sub(s.joined)), why)
}

// ProgressOf is the progress the room kept for the attendee called name,
// as JSON (the format of learn progress export), and whether there is one.
func (r *Room) ProgressOf(name string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.byName[Clean(name)]
	if !ok || s.progress == nil {
		return nil, false
	}
	return slices.Clone(s.progress), true
}
