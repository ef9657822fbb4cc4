package exit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// signalledCtx is a context ended by sig, as learn's root context is.
func signalledCtx(sig syscall.Signal) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(Signalled(sig))
	return ctx
}

// What a signal ended is reported by its kind, never by its text: a
// command that says what the signal stopped keeps its words under that
// signal's code and word; a cleanup that failed keeps exit 1; anything
// else becomes the signal's word and code, whatever its text begins with.
func TestASignalsEndIsReportedByKindNotText(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sig     syscall.Signal
		err     func(ctx context.Context) error
		code    int
		message string
	}{
		{"SIGTERM stops a scenario", syscall.SIGTERM, func(ctx context.Context) error {
			return New(OK, Interrupted(ctx, ": scenario lost-answer did not finish"))
		}, 143, "terminated: scenario lost-answer did not finish"},
		{"Ctrl-C stops a scenario", syscall.SIGINT, func(ctx context.Context) error {
			return New(OK, Interrupted(ctx, " while PostgreSQL was starting"))
		}, 130, "interrupted while PostgreSQL was starting"},
		{"a hangup in a cleanup", syscall.SIGHUP, func(context.Context) error {
			return New(Failure, Cleanup(errors.New("schema learn_x is left")))
		}, 1, "schema learn_x is left"},
		{"an error that only reads like the signal", syscall.SIGINT, func(context.Context) error {
			return New(Failure, errors.New("interrupted by the database: 57P01"))
		}, 130, "interrupted"},
		{"context canceled", syscall.SIGTERM, func(context.Context) error {
			return New(Failure, fmt.Errorf("start: %w", context.Canceled))
		}, 143, "terminated"},
		{"another signal's words", syscall.SIGTERM, func(context.Context) error {
			return New(OK, Interrupted(signalledCtx(syscall.SIGINT), ": scenario x did not finish"))
		}, 143, "terminated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := signalledCtx(tc.sig)
			err := BySignal(ctx, tc.err(ctx))
			if got := Code(err); got != tc.code || err == nil || err.Error() != tc.message {
				t.Errorf("exit %d %q, want %d %q", got, err, tc.code, tc.message)
			}
		})
	}
}

// Without a signal an error keeps its code; nil and OK are no error.
func TestCodes(t *testing.T) {
	bg := context.Background()
	for _, tc := range []struct {
		err  error
		code int
	}{
		{New(OK, nil), OK},
		{New(Usage, nil), Usage},
		{New(OK, errors.New("x")), Failure},
		{Usagef("learn demo", "demo takes one scenario"), Usage},
		{Signalled(syscall.SIGINT), 130},
		{New(OK, Interrupted(bg, "")), 130},
		{fmt.Errorf("print: %w", &os.PathError{Op: "write", Err: syscall.EPIPE}), BrokenPipe},
	} {
		if got := Code(BySignal(bg, tc.err)); got != tc.code {
			t.Errorf("Code(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
	if err := New(OK, nil); err != nil {
		t.Errorf("New(OK, nil) = %v, want nil", err)
	}
}
