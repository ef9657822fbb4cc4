// Package exit is the one way learn ends with an exit code: a command
// returns an [*Error] (or nil), and main prints its message once and exits
// with [Code] of it, as gum's exit package does. The codes, in one table:
//
//   - [OK] (0): done.
//   - [Failure] (1): something failed; the message says what and what to do.
//   - [Usage] (2): a command line learn cannot take ([Usagef]); the message
//     ends with where to read the usage.
//   - 128 + the signal: a signal ended learn ([Signalled], [Interrupted]):
//     130 for Ctrl-C (SIGINT), 143 for SIGTERM, 129 for SIGHUP, said in one
//     word ("interrupted", "terminated", "hangup").
//   - [BrokenPipe] (141): the reader of the output left (learn lesson |
//     head), silently, as a program killed by SIGPIPE.
//
// When a signal ended learn, [BySignal] gives what is reported: the
// signal's code and word, unless the command already said what the signal
// interrupted ([Interrupted]) or what it could not clean up on its way out
// ([Cleanup]).
//
// Where the rest is:
//   - [RootContext] (signal.go) is the context every command runs under:
//     the first SIGINT, SIGTERM or SIGHUP ends it with a [Signalled]
//     cause, caught from learn's start.
//   - [Handler] and [Styles] (print.go) print the error once, for fang:
//     "learn: " and the message in a log or a pipe, fang's styled block at
//     a terminal, with where to read the usage for a usage error.
package exit

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// The exit codes that are not a signal's.
const (
	OK         = 0
	Failure    = 1
	Usage      = 2
	BrokenPipe = 128 + int(syscall.SIGPIPE)
)

// Error ends learn with Code; Err, when not nil, is what is printed.
type Error struct {
	Code int
	Err  error
	// UsageOf is, for a usage error, the command ("learn demo") whose
	// --help the message sends the person to.
	UsageOf string
	// Signal is the signal that ended learn, 0 for none.
	Signal syscall.Signal
	// cleanup marks what a command could not remove after the signal that
	// is its normal end: BySignal reports it as it is.
	cleanup bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// New is what a command's work returned, an exit code and an error, as the
// error the command returns: nil for OK and no error; else an *Error with code (Failure at least when
// there is an error, whose message is printed). An err that is an *Error
// already says its code, and is returned as it is whatever code is.
func New(code int, err error) error {
	if err == nil {
		if code == OK {
			return nil
		}
		return &Error{Code: code}
	}
	if _, ok := errors.AsType[*Error](err); ok {
		return err
	}
	return &Error{Code: max(code, Failure), Err: err}
}

// Usagef is a command line learn cannot take, for the command at path
// ("learn demo"): exit code 2.
func Usagef(path, format string, args ...any) *Error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...), UsageOf: path}
}

// Signalled is learn ended by sig: 128 + its number, and its word.
func Signalled(sig syscall.Signal) *Error {
	return &Error{Code: 128 + int(sig), Err: errors.New(Words(sig)), Signal: sig}
}

// Interrupted is a command stopped by the signal that ended ctx, saying
// what it stopped: the signal's word, then detail (" while PostgreSQL was
// starting; nothing is left behind"), with the signal's code; SIGINT's
// when ctx ended without one.
func Interrupted(ctx context.Context, detail string) *Error {
	sig := syscall.SIGINT
	if s, ok := errors.AsType[*Error](context.Cause(ctx)); ok && s.Signal != 0 {
		sig = s.Signal
	}
	return &Error{Code: 128 + int(sig), Err: errors.New(Words(sig) + detail), Signal: sig}
}

// Cleanup is what a command could not remove of what it made, met on its
// way out after the signal that is its normal end (learn serve, learn
// workshop): exit 1 and its message, not the signal's.
func Cleanup(err error) *Error { return &Error{Code: Failure, Err: err, cleanup: true} }

// BySignal is err as learn reports it when a signal ended ctx (its cause is
// a Signalled): the signal's code and word whatever the command returned,
// unless err already says what that signal interrupted (Interrupted) or
// is a Cleanup. Without a signal, or without an error (a command for which
// the signal is its normal end, or one that had finished), err is returned
// as it is.
func BySignal(ctx context.Context, err error) error {
	s, ok := errors.AsType[*Error](context.Cause(ctx))
	if !ok || s.Signal == 0 || err == nil {
		return err
	}
	if e, ok := errors.AsType[*Error](err); ok && (e.cleanup || e.Signal == s.Signal) {
		return err
	}
	return s
}

// Code is the exit code for err: OK for nil, BrokenPipe for a write to a
// reader that left, an *Error's Code, else Failure.
func Code(err error) int {
	if err == nil {
		return OK
	}
	if errors.Is(err, syscall.EPIPE) {
		return BrokenPipe
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return Failure
}

// Words says what a signal did to learn, in one word: "interrupted"
// (SIGINT), "terminated" (SIGTERM), "hangup" (SIGHUP), else the signal's
// own name. Every message of learn about a signal uses it.
func Words(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "interrupted"
	case syscall.SIGTERM:
		return "terminated"
	case syscall.SIGHUP:
		return "hangup"
	}
	return sig.String()
}
