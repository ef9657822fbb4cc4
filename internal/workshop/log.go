package workshop

import (
	"fmt"
	"strings"

	"charm.land/ssh"
	"charm.land/wish/v2/ratelimiter"
)

// printf adapts a logf to the Printf of wish's middlewares.
type printf func(format string, args ...any)

func (p printf) Printf(format string, args ...any) { p(format, args...) }

// logf writes to the server's log (Config.Logf), with what an attendee
// chose (their user name, their terminal type) made safe to print.
func (w *Workshop) logf(format string, args ...any) {
	if w.cfg.Logf == nil {
		return
	}
	w.cfg.Logf("%s", printable(strings.TrimRight(fmt.Sprintf(format, args...), "\n")))
}

// alert is for what the presenter must see as well: the log and the feed.
func (w *Workshop) alert(format string, args ...any) {
	line := printable(strings.TrimSpace(fmt.Sprintf(format, args...)))
	w.logf("%s", line)
	first, _, _ := strings.Cut(line, "\n")
	w.room.Log("%s", first)
}

// printable replaces control characters (an escape sequence in a user
// name) with '?'; newlines and tabs stay.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return '?'
		}
		return r
	}, s)
}

// libraryLog takes a line wish's Bubble Tea middleware logged through
// charm's logger. A program killed is a client that hung up, which the
// session says itself ("ada left after 5m: disconnected"): dropped. Anything
// else (an app that failed, a panic in the window-size handler) is told
// the presenter, in words, with the library's line after it.
func (w *Workshop) libraryLog(line string) {
	line = strings.TrimSpace(line)
	if line == "" || strings.Contains(line, "program was killed") {
		return
	}
	w.alert("an attendee's app ended with an error: %s", line)
}

// sessionLimiter is wish's rate limiter with a message an attendee can act
// on.
type sessionLimiter struct {
	inner ratelimiter.RateLimiter
	w     *Workshop
}

func (l sessionLimiter) Allow(s ssh.Session) error {
	if err := l.inner.Allow(s); err != nil {
		l.w.alert("too many new sessions from %s: one refused", host(s.RemoteAddr()))
		return lineError("learn workshop: too many new sessions from your address at once; wait a few seconds, then ssh again")
	}
	return nil
}

// lineError is a message wish prints as it is: one line, ended for a
// terminal in raw mode.
type lineError string

func (e lineError) Error() string { return string(e) + "\r\n" }

// writerFunc is an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
