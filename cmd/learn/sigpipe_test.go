package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/learn-idempotency/learn/internal/exit"
)

// A reader of learn's output that leaves first (learn workshop | tee log,
// then Ctrl-C, which ends tee as well) never cuts learn's shutdown short:
// the built binary, supervised as a person runs it, ends on the signal
// with exit 0, its attendee's schema dropped and the room's summary
// written; learn serve likewise drops its schema. Without SIGPIPE ignored,
// the first line written to the closed pipe killed both.
func TestClosedOutputNeverCutsTheShutdown(t *testing.T) {
	bin := buildLearn(t)
	for _, tc := range []struct {
		name  string
		args  []string
		ready string
	}{
		{"workshop", []string{"workshop", "--addr", "127.0.0.1:0", "--code", "kq7m-3hxt"}, "ready;"},
		{"serve", []string{"serve", "--addr", "127.0.0.1:0"}, "learn serve: ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			before := otherSchemas(t)
			args := append(tc.args, "--database-url", testDB.ConnString())
			if tc.name == "workshop" {
				args = append(args, "--host-key", filepath.Join(dir, "key"), "--summary-dir", dir)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a process group, as a shell's job
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			// Both outputs into the pipe, as learn serve 2>&1 | grep replayed:
			// serve logs its shutdown to stderr, the workshop to stdout.
			cmd.Stdout, cmd.Stderr = w, w
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			t.Cleanup(func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			})
			sc := bufio.NewScanner(r)
			var out []string
			for sc.Scan() && !strings.Contains(sc.Text(), tc.ready) {
				out = append(out, sc.Text())
			}
			if tc.name == "workshop" {
				m := joinLine.FindStringSubmatch(strings.Join(out, "\n"))
				if m == nil {
					t.Fatalf("no ssh line:\n%s", strings.Join(out, "\n"))
				}
				attendPlay(t, m[1])
			}
			if held := slices.DeleteFunc(otherSchemas(t), func(s string) bool { return slices.Contains(before, s) }); len(held) == 0 {
				t.Fatalf("learn %s holds no schema: nothing to test", tc.name)
			}
			r.Close() // the reader leaves
			if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("learn %s after its reader left and Ctrl-C: %v (want exit 0)", tc.name, err)
			}
			if left := slices.DeleteFunc(otherSchemas(t), func(s string) bool { return slices.Contains(before, s) }); len(left) != 0 {
				t.Errorf("learn %s left schemas %v", tc.name, left)
			}
			if tc.name == "workshop" {
				sums, _ := filepath.Glob(filepath.Join(dir, "*.json"))
				if len(sums) != 1 {
					t.Errorf("the room's summary: %v, want one file in %s", sums, dir)
				}
			}
		})
	}
}

// An output whose reader left is no failure to report: exit 141, as a
// program SIGPIPE ends, and not a word on stderr.
func TestBrokenPipeIsQuiet(t *testing.T) {
	err := fmt.Errorf("print the lesson: %w", &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE})
	if got := exit.Code(err); got != exitBrokenPipe {
		t.Errorf("exit.Code(%v) = %d, want %d", err, got, exitBrokenPipe)
	}
	var b strings.Builder
	exit.Handler(&b)(&b, exit.Styles(&b), err)
	if b.Len() != 0 {
		t.Errorf("a broken pipe printed %q", b.String())
	}
	if got := exit.Code(errors.New("write: no space left on device")); got != exitFailure {
		t.Errorf("another write error exits %d, want %d", got, exitFailure)
	}
}
