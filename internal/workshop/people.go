package workshop

import (
	"context"
	"fmt"
	"sync"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// Seats count people, not sessions. A person is what authenticated: the
// key they signed with (a key that gave the code, from any connection),
// else the one connection in which they typed the code. Each person has
// one learn at a time, so one seat: a session that opens the app while
// the same person's app runs elsewhere (a second ssh over a connection
// shared with ssh -S / ControlMaster, or the same key from another
// terminal or after a network change) takes over, and the older one ends
// with a line that says why; the feed says so too. And one connection may
// hold at most maxSessionsPerConn sessions open at once (the app and the
// commands that need no terminal, such as progress): another is refused
// with a line.

// maxSessionsPerConn is how many sessions one connection may have open at
// once.
const maxSessionsPerConn = 4

// replaceWait is how long a session that takes over waits for the one it
// replaces to leave its seat (it ends within milliseconds: its runs are
// removed first) before it joins anyway.
const replaceWait = 5 * time.Second

type personKey struct{}

// person is who authenticated a connection, stored in its context by
// the auth callbacks: "key SHA256:…" or "connection <its session id>".
func personOf(ctx ssh.Context) string {
	if p, ok := ctx.Value(personKey{}).(string); ok {
		return p
	}
	return "connection " + ctx.SessionID()
}

// setPerson records who authenticated the connection of ctx: the holder
// of key, or (key nil) the connection itself.
func setPerson(ctx ssh.Context, key gossh.PublicKey) {
	if key == nil {
		return // personOf falls back to the connection
	}
	ctx.SetValue(personKey{}, "key "+gossh.FingerprintSHA256(key))
}

// people knows which session holds each person's seat.
type people struct {
	mu   sync.Mutex
	apps map[string]*app // by person
}

// app is one session's hold on a person's seat.
type app struct {
	person   string
	replaced chan struct{} // closed when a newer session of the person takes over
	left     chan struct{} // closed once this session has left its seat
	once     sync.Once
}

// take makes a new session of person the one that holds their seat; it
// returns it and the session it replaces (nil when none), which has been
// told to end.
func (p *people) take(person string) (mine, older *app) {
	mine = &app{person: person, replaced: make(chan struct{}), left: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.apps == nil {
		p.apps = map[string]*app{}
	}
	older = p.apps[person]
	p.apps[person] = mine
	if older != nil {
		close(older.replaced)
	}
	return mine, older
}

// leave says a's session has left its seat (or never took one).
func (p *people) leave(a *app) {
	a.once.Do(func() {
		p.mu.Lock()
		if p.apps[a.person] == a {
			delete(p.apps, a.person)
		}
		p.mu.Unlock()
		close(a.left)
	})
}

// waitFor waits until older has left its seat, at most replaceWait, or
// until ctx ends.
func waitFor(ctx context.Context, older *app) {
	if older == nil {
		return
	}
	t := time.NewTimer(replaceWait)
	defer t.Stop()
	select {
	case <-older.left:
	case <-t.C:
	case <-ctx.Done():
	}
}

// isReplaced reports whether a newer session of the person has taken over.
func (a *app) isReplaced() bool {
	select {
	case <-a.replaced:
		return true
	default:
		return false
	}
}

// openSession counts a session opened on the connection cw follows;
// false when it has maxSessionsPerConn open already, with how many it
// refused so.
func (cw *connWatch) openSession() (release func(), ok bool, refused int) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.sessions >= maxSessionsPerConn {
		cw.refused++
		return nil, false, cw.refused
	}
	cw.sessions++
	return func() {
		cw.mu.Lock()
		cw.sessions--
		cw.mu.Unlock()
	}, true, 0
}

// tooManySessions is what a session over maxSessionsPerConn is refused
// with.
var tooManySessions = fmt.Sprintf("learn workshop: one connection may have %d sessions open at once; close one first (ssh connection sharing: -S or ControlMaster)", maxSessionsPerConn)
