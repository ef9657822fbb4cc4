package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/learn-idempotency/learn/internal/doctor"
	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/pgtemp"
)

// envPostgres names the environment variable that gives --postgres its
// default.
const envPostgres = doctor.EnvPostgres

// globals are the flags every command takes, persistent flags of the root:
// they may come before or after the command.
type globals struct {
	databaseURL string
	postgres    string
	theme       string
	present     bool
	// preview, when set, takes the page the app would open first instead
	// of opening it (the supervisor's first frame; see firstFrame).
	preview func(first common.Open)
	// exercisesDir is the exercises' module the app offers (learn
	// exercises DIR); "" is ./learn-exercises.
	exercisesDir string
}

// register defines the global flags on fs, with their defaults from the
// environment.
func (g *globals) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.databaseURL, "database-url", os.Getenv("DATABASE_URL"),
		"use this PostgreSQL: a fresh schema in it, dropped at exit (default: $DATABASE_URL)")
	// The help shows no default: it would print the password of the URL.
	fs.Lookup("database-url").DefValue = ""
	mode := os.Getenv(envPostgres)
	if mode == "" {
		mode = string(pgtemp.Auto)
	}
	g.postgres = mode
	fs.Var(&modeValue{p: &g.postgres}, "postgres",
		"how to get a PostgreSQL: auto, url, local, docker or download (default: $"+envPostgres+", else auto: the URL if set, else local binaries, else Docker, else download it once)")
	fs.Lookup("postgres").DefValue = ""
	fs.Var(newEnum(&g.theme, "theme", "dark", "dark", "light"), "theme", "the colours for a dark or light terminal; NO_COLOR turns colour off")
	fs.BoolVar(&g.present, "present", false, "presenter mode: big captions, a clock, no chrome; page up/down step (a presentation clicker); P toggles it")
}

func (g *globals) pgOptions() (pgtemp.Options, error) {
	mode, err := pgtemp.ParseMode(g.postgres)
	if err != nil {
		if env := os.Getenv(envPostgres); env != "" && env == g.postgres {
			err = fmt.Errorf("%s=%s: %w", envPostgres, env, err)
		}
		return pgtemp.Options{}, err
	}
	return pgtemp.Options{Mode: mode, DatabaseURL: g.databaseURL}, nil
}

// options is pgOptions for cmd, a command that uses the globals: a
// --postgres that came from the environment is checked only here
// (--postgres itself is checked as it is parsed), so that learn help and
// learn version work whatever LEARN_POSTGRES holds. A bad one is a usage
// error.
func (g *globals) options(cmd *cobra.Command) (pgtemp.Options, error) {
	opts, err := g.pgOptions()
	if err != nil {
		return opts, usageErrorf(cmd, "%v", err)
	}
	return opts, nil
}

// usageErrorf is a command line learn cannot take, for cmd: exit code 2,
// and the message sends the person to cmd's --help.
func usageErrorf(cmd *cobra.Command, format string, args ...any) error {
	return exit.Usagef(cmd.CommandPath(), format, args...)
}

// usageOf is err as a usage error of cmd (nil stays nil; an error that
// carries its exit code already keeps it).
func usageOf(cmd *cobra.Command, err error) error {
	if _, ok := errors.AsType[*exit.Error](err); ok || err == nil {
		return err
	}
	return usageErrorf(cmd, "%v", err)
}

// flagError is cobra's FlagErrorFunc: every flag that cannot be parsed is a
// usage error. A value one of learn's flag types refused says so in its own
// words ("--copies must be from 2 to 100, got 500").
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if iv, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
		if ve, ok := errors.AsType[*valueError](iv.Unwrap()); ok {
			msg = ve.Error()
		}
	}
	return exit.Usagef(cmd.CommandPath(), "%s", msg)
}

// valueError is a flag value learn refuses, in words that say what to pass.
type valueError struct{ msg string }

func (e *valueError) Error() string { return e.msg }

// enumValue is a string flag that takes one of a few words.
type enumValue struct {
	p       *string
	name    string
	allowed []string
}

func newEnum(p *string, name, def string, allowed ...string) *enumValue {
	*p = def
	return &enumValue{p: p, name: name, allowed: allowed}
}

func (e *enumValue) String() string { return *e.p }
func (e *enumValue) Type() string   { return "string" }

func (e *enumValue) Set(v string) error {
	if !slices.Contains(e.allowed, v) {
		return &valueError{fmt.Sprintf("--%s %q: use %s", e.name, v, orList(e.allowed))}
	}
	*e.p = v
	return nil
}

// modeValue is --postgres: a mode pgtemp knows.
type modeValue struct{ p *string }

func (m *modeValue) String() string { return *m.p }
func (m *modeValue) Type() string   { return "string" }

func (m *modeValue) Set(v string) error {
	if _, err := pgtemp.ParseMode(v); err != nil {
		return &valueError{"--postgres: " + err.Error()}
	}
	*m.p = v
	return nil
}

// rangeValue is an int flag that takes a whole number from lo to hi.
type rangeValue struct {
	p      *int
	name   string
	lo, hi int
}

func newRange(p *int, name string, def, lo, hi int) *rangeValue {
	*p = def
	return &rangeValue{p: p, name: name, lo: lo, hi: hi}
}

func (r *rangeValue) String() string { return strconv.Itoa(*r.p) }
func (r *rangeValue) Type() string   { return "int" }

func (r *rangeValue) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return &valueError{fmt.Sprintf("--%s must be a whole number from %d to %d, got %q", r.name, r.lo, r.hi, v)}
	}
	if n < r.lo || n > r.hi {
		return &valueError{fmt.Sprintf("--%s must be from %d to %d, got %d", r.name, r.lo, r.hi, n)}
	}
	*r.p = n
	return nil
}

// addrValue is a host:port flag whose port is a number from 0 to 65535 (0:
// any free port), checked as it is parsed, so that an impossible address
// is a usage error (2) like any other bad flag. hint is the examples the
// message gives.
type addrValue struct {
	p          *string
	name, hint string
}

func newAddr(p *string, name, def, hint string) *addrValue {
	*p = def
	return &addrValue{p: p, name: name, hint: hint}
}

func (a *addrValue) String() string { return *a.p }
func (a *addrValue) Type() string   { return "host:port" }

func (a *addrValue) Set(v string) error {
	_, port, err := net.SplitHostPort(v)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return &valueError{fmt.Sprintf("--%s %q is not host:port with a port from 0 to 65535 (%s)", a.name, v, a.hint)}
	}
	*a.p = v
	return nil
}

// durationValue is a duration flag of at least min.
type durationValue struct {
	p    *time.Duration
	name string
	min  time.Duration
}

func newDuration(p *time.Duration, name string, def, min time.Duration) *durationValue {
	*p = def
	return &durationValue{p: p, name: name, min: min}
}

func (d *durationValue) String() string { return d.p.String() }
func (d *durationValue) Type() string   { return "duration" }

func (d *durationValue) Set(v string) error {
	t, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return &valueError{fmt.Sprintf("--%s must be a duration such as 30m or 1h30m, got %q", d.name, v)}
	case t < d.min:
		return &valueError{fmt.Sprintf("--%s must be at least %s, got %s", d.name, d.min, t)}
	}
	*d.p = t
	return nil
}

// orList joins words as "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
