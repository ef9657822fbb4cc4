// Package room is the state of a workshop that the presenter sees: who is
// connected (name, terminal size, the screen each is on), what each has
// answered, the poll of the question open, and a short feed of what
// happened. Every attendee's session tells the room through its Seat; the
// presenter's dashboard reads a Snapshot whenever Changed says so, and
// sends messages to every attendee's app through SendAll.
//
// The room knows nothing of SSH nor of Bubble Tea: the messages it
// delivers are opaque, handed to the function each attendee joined with,
// one after another, on a goroutine of that attendee's own, so a busy
// app never holds up the presenter or the others.
package room

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// FeedSize is how many lines of the feed the room keeps.
const FeedSize = 200

// outboxSize is how many messages may wait for one attendee's app; more
// are dropped (and the feed says so) rather than hold up the presenter.
const outboxSize = 64

// ErrEnded is Join's error once the workshop has ended.
var ErrEnded = errors.New("the workshop has ended")

// FullError is Join's error when the room holds its most attendees.
type FullError struct{ Max int }

func (e *FullError) Error() string {
	are := "are"
	if e.Max == 1 {
		are = "is"
	}
	return fmt.Sprintf("the room is full: %s %s connected, the most this workshop takes", count(e.Max, "attendee"), are)
}

// Room is one workshop's room. Its methods are safe for concurrent use.
type Room struct {
	max     int
	started time.Time
	now     func() time.Time
	sets    []quiz.Set

	mu        sync.Mutex
	seats     []*Seat          // every attendee who ever joined, in the order they first came
	byName    map[string]*Seat // the same, by name
	feed      []Entry
	poll      *pollKey // the question the presenter opened, or nil
	closed    *Poll    // the poll the presenter closed, as it stood then, or nil
	lastAsked *pollKey // the question answered last, or nil
	ended     bool
	changed   chan struct{}
	kept      chan struct{} // SummaryChanged's
}

// pollKey names a question: its set and its ID.
type pollKey struct{ set, question string }

// Entry is one line of the feed.
type Entry struct {
	At   time.Time
	Text string
}

// New is an empty room for at most max attendees at once.
func New(max int) *Room {
	return &Room{max: max, started: time.Now(), now: time.Now, sets: quiz.Sets(),
		byName: map[string]*Seat{}, changed: make(chan struct{}, 1), kept: make(chan struct{}, 1)}
}

// Changed is signalled (coalesced: one signal may stand for many changes)
// after every change of the room; read a Snapshot then.
func (r *Room) Changed() <-chan struct{} { return r.changed }

// SummaryChanged is signalled (coalesced, as Changed) after every change
// of the room and of what it keeps of an attendee's progress: whoever
// keeps the summary on disk reads it then. It is Changed's twin, so that
// the dashboard and the keeper each get every signal.
func (r *Room) SummaryChanged() <-chan struct{} { return r.kept }

// changedLocked signals Changed and SummaryChanged without blocking.
func (r *Room) changedLocked() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
	r.keptLocked()
}

// keptLocked signals SummaryChanged without blocking.
func (r *Room) keptLocked() {
	select {
	case r.kept <- struct{}{}:
	default:
	}
}

// Log adds a line to the feed (a refused connection, a session's end).
func (r *Room) Log(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logLocked(format, args...)
}

func (r *Room) logLocked(format string, args ...any) {
	r.feed = append(r.feed, Entry{At: r.now(), Text: fmt.Sprintf(format, args...)})
	if len(r.feed) > FeedSize {
		r.feed = append(r.feed[:0:0], r.feed[len(r.feed)-FeedSize:]...)
	}
	r.changedLocked()
}

// Join seats an attendee: name is the name they gave (their SSH user),
// made safe to print and, while another attendee of that name is
// connected, made unique ("ada-2"); w x h is their terminal; send delivers
// a message to their app (SendAll), in order, from a goroutine of the
// seat's own. Someone who left and comes back with the same name gets
// their seat again, with what they answered and the progress the room
// kept (Seat.Progress). It fails with a *FullError when max attendees are
// connected, and ErrEnded once the workshop has ended.
func (r *Room) Join(name, remote string, w, h int, send func(msg any)) (*Seat, error) {
	name = Clean(name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return nil, ErrEnded
	}
	if r.connectedLocked() >= r.max {
		r.logLocked("%s was turned away: the room is full (%s at once)", name, count(r.max, "attendee"))
		return nil, &FullError{Max: r.max}
	}
	if s := r.byName[name]; s != nil && s.connected {
		for n := 2; ; n++ {
			other := fmt.Sprintf("%s-%d", name, n)
			if o := r.byName[other]; o == nil || !o.connected {
				name = other
				break
			}
		}
	}
	s := r.byName[name]
	if s == nil {
		s = &Seat{room: r, name: name, answers: map[pollKey]Answer{}, firstJoined: r.now()}
		r.seats = append(r.seats, s)
		r.byName[name] = s
	}
	s.connected, s.remote, s.width, s.height, s.capped = true, remote, w, h, false
	s.joined, s.left = r.now(), time.Time{}
	s.sessions++
	s.title, s.at = "", progress.Place{}
	s.outbox = make(chan any, outboxSize)
	go r.deliver(name, s.outbox, send)
	if s.sessions > 1 {
		r.logLocked("%s is back from %s (%dx%d)", name, Host(remote), w, h)
	} else {
		r.logLocked("%s joined from %s (%dx%d)", name, Host(remote), w, h)
	}
	return s, nil
}

// deliver hands each message of outbox to send, in order, until the outbox
// is closed. A panic in send (a bug) loses that message, said in the
// feed, and nothing else.
func (r *Room) deliver(name string, outbox <-chan any, send func(any)) {
	for msg := range outbox {
		func() {
			defer func() {
				if p := recover(); p != nil {
					r.Log("%s's app missed a message on a bug (%v)", name, p)
				}
			}()
			send(msg)
		}()
	}
}

func (r *Room) connectedLocked() int {
	n := 0
	for _, s := range r.seats {
		if s.connected {
			n++
		}
	}
	return n
}

// Connected is how many attendees are connected now.
func (r *Room) Connected() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.connectedLocked()
}

// SendAll delivers msg to the app of every connected attendee and returns
// how many it went to; what logs it in the feed ("what (2 attendees)"),
// unless empty. An attendee whose app has fallen behind by outboxSize
// messages misses it (the feed says so).
func (r *Room) SendAll(msg any, what string) int {
	return r.send(func(*Seat) bool { return true }, msg, what)
}

// SendOn is SendAll for the connected attendees on a screen of page
// (e.g. progress.PagePlay) only; when there are none, nothing is logged
// and it returns 0.
func (r *Room) SendOn(page progress.Page, msg any, what string) int {
	return r.send(func(s *Seat) bool { return s.at.Page == page }, msg, what)
}

func (r *Room) send(to func(*Seat) bool, msg any, what string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, missed := 0, 0
	for _, s := range r.seats {
		if !s.connected || !to(s) {
			continue
		}
		select {
		case s.outbox <- msg:
			n++
		default:
			missed++
			r.logLocked("%s's app is busy: it missed %s", s.name, what)
		}
	}
	if what != "" && n+missed > 0 {
		r.logLocked("%s (%s)", what, count(n, "attendee"))
	}
	return n
}

// OnScreen is how many connected attendees are on a screen of page (e.g.
// progress.PagePlay) now.
func (r *Room) OnScreen(page progress.Page) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.seats {
		if s.connected && s.at.Page == page {
			n++
		}
	}
	return n
}

// OpenPoll makes question qid of set the open question: the poll shows
// the room's answers to it. An unknown question closes the poll.
func (r *Room) OpenPoll(set, qid string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.poll, r.closed = nil, nil
	if _, ok := r.question(pollKey{set, qid}); ok {
		r.poll = &pollKey{set, qid}
	}
	r.changedLocked()
}

// ClosePoll closes the poll shown (the question the presenter opened, or
// else the one answered last): its counts stay as they stand now, marked
// Closed, until the presenter opens another question; answers given after
// count in the attendees' own scores, not in it. The feed says so. It
// returns the closed poll's title ("Checkpoint 3"), or "" when there was
// no poll to close (or it was closed already).
func (r *Room) ClosePoll() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed != nil && r.poll == nil {
		return ""
	}
	p := r.shownLocked()
	if p == nil {
		return ""
	}
	p.Opened, p.Closed = false, true
	r.poll, r.closed = nil, p
	r.logLocked("closed the poll on %s: %d answered", p.Title, p.Answered)
	return p.Title
}

// End marks the workshop as ended: nobody joins any more. The sessions are
// told by whoever runs them.
func (r *Room) End() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	r.logLocked("the workshop ends")
}

// question finds the question k names, with its number in its set (from 1).
func (r *Room) question(k pollKey) (question, bool) {
	for _, set := range r.sets {
		if set.ID != k.set {
			continue
		}
		for i, q := range set.Questions {
			if q.ID == k.question {
				return question{Question: q, set: set, n: i + 1}, true
			}
		}
	}
	return question{}, false
}

type question struct {
	quiz.Question
	set quiz.Set
	n   int
}

// title is "Checkpoint 3".
func (q question) title() string { return fmt.Sprintf("%s %d", q.set.Title, q.n) }

// Clean makes a name given over SSH safe to print in the presenter's
// terminal and short: letters, digits and - _ . only, at most 24 of them;
// "attendee" when nothing is left.
func Clean(name string) string {
	var b strings.Builder
	n := 0
	for _, c := range name {
		if n == 24 {
			break
		}
		if unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("-_.", c) {
			b.WriteRune(c)
			n++
		}
	}
	if b.Len() == 0 {
		return "attendee"
	}
	return b.String()
}

// Host is the host of a remote address "host:port" (the address itself
// when it has no port).
func Host(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}

// Lasted is how long something lasted, for people: "1m30s", rounded to the
// second; "under a second" below one.
func Lasted(d time.Duration) string {
	if d < time.Second {
		return "under a second"
	}
	return d.Round(time.Second).String()
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
