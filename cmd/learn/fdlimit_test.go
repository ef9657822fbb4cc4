//go:build unix

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// learn under a limit of open files too low for what it is asked says the
// limit, what it needs and what to raise, and exits 1: too low to start at
// all (ulimit -n 8: the Go runtime used to die making its poller, with a
// goroutine dump), or too low for a race of 100 copies (ulimit -n 128: the
// race used to hang, its listener waiting for a free file for ever).
func TestTooFewOpenFilesAreSaid(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to set ulimit -n with")
	}
	bin := buildLearn(t)
	for _, tt := range []struct {
		limit string
		args  string
		says  string
	}{
		{"8", "version", "needs about 64 to start"},
		{"128", "demo concurrent-copies --copies 100 " + strings.Join(serveDBArgs(), " "), "or race fewer copies"},
	} {
		t.Run("ulimit -n "+tt.limit, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against the hang, not a bound
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", "ulimit -n "+tt.limit+" && exec "+bin+" "+tt.args)
			cmd.Env = append(os.Environ(), "DATABASE_URL=")
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("learn still ran a minute later:\n%s", out)
			}
			ee, ok := errors.AsType[*exec.ExitError](err)
			if !ok || ee.ExitCode() != exitFailure {
				t.Errorf("exit %v, want %d:\n%s", err, exitFailure, out)
			}
			for _, want := range []string{"learn may open only " + tt.limit + " files at once (ulimit -n)", tt.says, "ulimit -n 4096"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("output does not say %q:\n%s", want, out)
				}
			}
			if strings.Contains(string(out), "goroutine ") || strings.Contains(string(out), "fatal error") {
				t.Errorf("a goroutine dump:\n%.600s", out)
			}
		})
	}
}
