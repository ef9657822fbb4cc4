// Package flagval is learn's flag values: pflag.Value types that check
// what they are given as the command line is parsed, so that a value
// learn cannot take is a usage error (exit 2) before any command runs, in
// words that say what to pass ([Error]).
//
//   - [Enum] is a string that takes one of a few words (--theme,
//     --variant).
//   - [Mode] is --postgres: a mode pgtemp knows.
//   - [Range] is a whole number from lo to hi (--copies, --instances).
//   - [Addr] is host:port with a port from 0 to 65535 (--addr).
//   - [Duration] is a duration of at least a minimum (--idle).
//   - [OrList] joins words as the messages do: "a, b or c".
package flagval

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/pgtemp"
)

// Error is a flag value learn refuses, in words that say what to pass:
// cmd/learn's flag error prints it as it is, a usage error.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// Enum is a string flag that takes one of a few words.
type Enum struct {
	p       *string
	name    string
	allowed []string
}

// NewEnum is a flag --name into *p, set to def, that takes one of
// allowed.
func NewEnum(p *string, name, def string, allowed ...string) *Enum {
	*p = def
	return &Enum{p: p, name: name, allowed: allowed}
}

func (e *Enum) String() string { return *e.p }
func (e *Enum) Type() string   { return "string" }

func (e *Enum) Set(v string) error {
	if !slices.Contains(e.allowed, v) {
		return &Error{fmt.Sprintf("--%s %q: use %s", e.name, v, OrList(e.allowed))}
	}
	*e.p = v
	return nil
}

// Mode is --postgres: a mode pgtemp knows.
type Mode struct{ p *string }

// NewMode is --postgres into *p, which holds its default already (the
// environment's).
func NewMode(p *string) *Mode { return &Mode{p: p} }

func (m *Mode) String() string { return *m.p }
func (m *Mode) Type() string   { return "string" }

func (m *Mode) Set(v string) error {
	if _, err := pgtemp.ParseMode(v); err != nil {
		return &Error{"--postgres: " + err.Error()}
	}
	*m.p = v
	return nil
}

// Range is an int flag that takes a whole number from lo to hi.
type Range struct {
	p      *int
	name   string
	lo, hi int
}

// NewRange is a flag --name into *p, set to def, that takes a whole
// number from lo to hi.
func NewRange(p *int, name string, def, lo, hi int) *Range {
	*p = def
	return &Range{p: p, name: name, lo: lo, hi: hi}
}

func (r *Range) String() string { return strconv.Itoa(*r.p) }
func (r *Range) Type() string   { return "int" }

func (r *Range) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return &Error{fmt.Sprintf("--%s must be a whole number from %d to %d, got %q", r.name, r.lo, r.hi, v)}
	}
	if n < r.lo || n > r.hi {
		return &Error{fmt.Sprintf("--%s must be from %d to %d, got %d", r.name, r.lo, r.hi, n)}
	}
	*r.p = n
	return nil
}

// Addr is a host:port flag whose port is a number from 0 to 65535 (0:
// any free port), checked as it is parsed, so that an impossible address
// is a usage error (2) like any other bad flag. hint is the examples the
// message gives.
type Addr struct {
	p          *string
	name, hint string
}

// NewAddr is a flag --name into *p, set to def, that takes host:port;
// hint is the examples its refusal gives.
func NewAddr(p *string, name, def, hint string) *Addr {
	*p = def
	return &Addr{p: p, name: name, hint: hint}
}

func (a *Addr) String() string { return *a.p }
func (a *Addr) Type() string   { return "host:port" }

func (a *Addr) Set(v string) error {
	_, port, err := net.SplitHostPort(v)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return &Error{fmt.Sprintf("--%s %q is not host:port with a port from 0 to 65535 (%s)", a.name, v, a.hint)}
	}
	*a.p = v
	return nil
}

// Duration is a duration flag of at least min.
type Duration struct {
	p    *time.Duration
	name string
	min  time.Duration
}

// NewDuration is a flag --name into *p, set to def, that takes a
// duration of at least min.
func NewDuration(p *time.Duration, name string, def, min time.Duration) *Duration {
	*p = def
	return &Duration{p: p, name: name, min: min}
}

func (d *Duration) String() string { return d.p.String() }
func (d *Duration) Type() string   { return "duration" }

func (d *Duration) Set(v string) error {
	t, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return &Error{fmt.Sprintf("--%s must be a duration such as 30m or 1h30m, got %q", d.name, v)}
	case t < d.min:
		return &Error{fmt.Sprintf("--%s must be at least %s, got %s", d.name, d.min, t)}
	}
	*d.p = t
	return nil
}

// OrList joins words as "a or b", "a, b or c".
func OrList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
