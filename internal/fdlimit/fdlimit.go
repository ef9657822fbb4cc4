// Package fdlimit says how many files learn may open at once (the soft
// RLIMIT_NOFILE, which Go raises to the hard limit as it starts) and how
// many it has open, so that a limit too low is said with what to raise
// instead of a run that hangs or a runtime that dies (issue 21: at
// ulimit -n 8 the Go runtime failed to make its poller, with a goroutine
// dump).
package fdlimit

import "fmt"

// Start is the fewest files learn needs to start a PostgreSQL and run the
// lesson: PostgreSQL refuses to start with fewer than about 50 of its own,
// and learn's supervisor, poller and terminal take a few.
const Start = 64

// Overhead is what learn holds besides a run's connections: the terminal,
// the supervisor's pipes, the poller, a listener per API instance, the
// database's admin connections.
const Overhead = 32

// Raise is what to do about a limit that is too low, for people.
const Raise = "raise it with `ulimit -n 4096` in the shell that starts learn (past the hard limit, as root, or in /etc/security/limits.conf or launchctl limit maxfiles), then start learn again"

// TooLow is the error of a limit below what learn needs.
type TooLow struct {
	Limit int    // files learn may open at once
	Need  int    // files it needs for what it was asked
	What  string // what it was asked, e.g. "to start"
}

func (e *TooLow) Error() string {
	return fmt.Sprintf("learn may open only %d files at once (ulimit -n), and it needs about %d %s: %s", e.Limit, e.Need, e.What, Raise)
}

// CheckStart returns a *TooLow when learn may open fewer than Start files;
// nil when it may open enough, or when the limit cannot be read.
func CheckStart() error {
	if n, ok := Limit(); ok && n < Start {
		return &TooLow{Limit: n, Need: Start, What: "to start (PostgreSQL alone needs about 50)"}
	}
	return nil
}

// Check returns a *TooLow when need more files than learn may still open
// (its limit less those it has open now) would not fit; what says what
// they are for. It is nil when they fit, or when the limit cannot be read.
func Check(need int, what string) error {
	n, ok := Limit()
	if !ok {
		return nil
	}
	open, _ := Open()
	if need > n-open {
		return &TooLow{Limit: n, Need: need + open, What: what}
	}
	return nil
}
