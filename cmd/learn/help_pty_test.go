package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
)

// runAtSilentTerminal runs bin with args at a pseudo terminal that never
// answers a query (as Emacs' shell mode, or a CI runner's), and returns
// everything bin wrote to it and its exit code.
func runAtSilentTerminal(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+t.TempDir())
	ptm, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&out, ptm) // ends with EIO once bin and its children are gone
	}()
	_ = cmd.Wait()
	<-copied
	_ = ptm.Close()
	return out.String(), cmd.ProcessState.ExitCode()
}

// Help and usage errors at a terminal never ask it anything: a terminal
// that does not answer (Emacs' shell mode, CI's pseudo terminals) made
// each wait 4 s, fang asking the background colour on standard input and
// again on standard output, 2 s each, with TERM=dumb and NO_COLOR=1 too.
// The question (OSC 11, and the DA1 that follows it) is never sent now,
// and the help is printed once (the supervisor's first frame printed
// cobra's plain help too, in raw mode, before the app's process printed
// fang's).
func TestHelpAndUsageErrorsNeverQueryTheTerminal(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	queries := []string{"\x1b]11;?", "\x1b[c"}
	for _, c := range []struct {
		args []string
		env  []string
		code int
		says string
	}{
		{[]string{"--help"}, nil, 0, "Exit codes:"},
		{[]string{"help", "play"}, nil, 0, "Open the play screen on a scenario"},
		{[]string{"play", "--help"}, []string{"TERM=dumb"}, 0, "Open the play screen on a scenario"},
		{[]string{"serve", "-h"}, []string{"NO_COLOR=1"}, 0, "learn serve [SCENARIO] [--flags]"},
		{[]string{"--bogus"}, nil, 2, "bogus"},
		{[]string{"race", "extra"}, nil, 2, "race takes no names"},
		{[]string{"nosuchcommand"}, nil, 2, "unknown command"},
	} {
		t.Run(strings.Join(append(c.env, c.args...), " "), func(t *testing.T) {
			out, code := runAtSilentTerminal(t, bin, c.env, c.args...)
			for _, q := range queries {
				if strings.Contains(out, q) {
					t.Errorf("learn %s asked the terminal %q:\n%q", strings.Join(c.args, " "), q, out)
				}
			}
			if plain := ansi.Strip(out); code != c.code || !strings.Contains(plain, c.says) || c.code == 0 && strings.Count(plain, c.says) != 1 {
				t.Errorf("learn %s: exit %d, want %d, and %q once in:\n%s", strings.Join(c.args, " "), code, c.code, c.says, plain)
			}
		})
	}
}
