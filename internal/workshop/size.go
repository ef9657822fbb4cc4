package workshop

import (
	"charm.land/ssh"

	"github.com/learn-idempotency/learn/internal/room"
)

// The largest window an attendee's app is drawn at, in cells. A terminal
// full screen on a 4K display at a small font (8x16 pixels) is 480x135;
// these are above it, so no real terminal is cut. A client may ask for any
// size, though, and the app's frame (and Glamour's wrapping, a play
// screen's panes) grows with the cells asked for: 3000x1500 took the
// workshop from 240 MB to 1.15 GB resident. A larger window is drawn at
// this size (the top left of the terminal) and shown capped on the
// presenter's dashboard.
const (
	MaxWidth  = 500
	MaxHeight = 200
)

// capSize is w x h bounded by MaxWidth x MaxHeight, and whether either was
// over.
func capSize(w, h int) (cw, ch int, capped bool) {
	return min(w, MaxWidth), min(h, MaxHeight), w > MaxWidth || h > MaxHeight
}

// cappedSession is an attendee's session as their app sees it: its
// terminal's size, at the start and at every window change, bounded by
// capSize, and told to the room (with whether it was capped) as it
// changes. Everything else is the session's.
type cappedSession struct {
	ssh.Session
	pty     ssh.Pty
	changes chan ssh.Window
}

// capWindow wraps sess (which has a terminal) and starts the goroutine
// that caps its window changes for seat, under guard (a bug in it ends
// it, and nothing else); it ends with the session.
func capWindow(sess ssh.Session, seat *room.Seat, guard func(what string, fn func())) *cappedSession {
	pty, raw, _ := sess.Pty()
	w, h, capped := capSize(pty.Window.Width, pty.Window.Height)
	pty.Window.Width, pty.Window.Height = w, h
	seat.Resize(w, h, capped)
	c := &cappedSession{Session: sess, pty: pty, changes: make(chan ssh.Window)}
	done := sess.Context().Done()
	go guard(seat.Name()+"'s window changes", func() {
		for {
			var win ssh.Window
			select {
			case <-done:
				return
			case w, ok := <-raw:
				if !ok { // the session's requests have ended
					return
				}
				win = w
			}
			var capped bool
			win.Width, win.Height, capped = capSize(win.Width, win.Height)
			seat.Resize(win.Width, win.Height, capped)
			select {
			case <-done:
				return
			case c.changes <- win:
			}
		}
	})
	return c
}

// Pty is the session's terminal at its capped size, and its capped window
// changes.
func (c *cappedSession) Pty() (ssh.Pty, <-chan ssh.Window, bool) {
	return c.pty, c.changes, true
}
