package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// privateTmux is a tmux server of a test's own (its own socket, no
// configuration), for tests that set server options or run a shell with
// job control; it is killed when the test ends.
type privateTmux struct {
	t      *testing.T
	socket string
	watch  *paneWatch // the changes of the pane "main", heard from the first wait on
}

func newPrivateTmux(t *testing.T) *privateTmux {
	t.Helper()
	requireTool(t, "tmux")
	p := &privateTmux{t: t, socket: fmt.Sprintf("learn-test-%d", time.Now().UnixNano())}
	t.Cleanup(func() {
		path, _ := p.cmd("display-message", "-p", "#{socket_path}").Output()
		_ = p.cmd("kill-server").Run()
		if s := strings.TrimSpace(string(path)); s != "" {
			os.Remove(s) // tmux leaves its socket behind
		}
	})
	return p
}

func (p *privateTmux) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command("tmux", append([]string{"-L", p.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	return cmd
}

func (p *privateTmux) run(args ...string) {
	p.t.Helper()
	if out, err := p.cmd(args...).CombinedOutput(); err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (p *privateTmux) screen() string {
	out, err := p.cmd("capture-pane", "-p", "-t", "main").Output()
	if err != nil {
		p.t.Fatalf("capture-pane: %v", err)
	}
	return string(out)
}

// until waits until ok holds, checking it at once and again at each change
// of the pane "main" (its first, then, sets up the watch).
func (p *privateTmux) until(ok func() bool, what func() string) {
	p.t.Helper()
	if p.watch == nil {
		p.watch = watchPane(p.t, p.cmd, "main")
	}
	p.watch.until(p.t, ok, func() string { return fmt.Sprintf("%s never came; the pane:\n%s", what(), p.screen()) })
}

// waitFor waits until the screen matches re and returns the screen.
func (p *privateTmux) waitFor(re *regexp.Regexp) string {
	p.t.Helper()
	var scr string
	p.until(func() bool {
		scr = p.screen()
		return re.MatchString(scr)
	}, func() string { return re.String() })
	return scr
}

// waitGone waits until no process runs bin and dir holds no cluster:
// woken by the exits of learn's processes and of those that name dir (its
// clusters'), it then looks for a cluster left in dir once.
func waitGone(t *testing.T, bin, dir string) {
	t.Helper()
	for {
		procs := append(processesRunning(bin), processesMentioning(filepath.Join(dir, "learn-"))...)
		if len(procs) == 0 {
			break
		}
		waitExit(t, pidsOf(procs))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "learn-*")); len(left) > 0 {
		t.Fatalf("left behind: clusters %v", left)
	}
}

// processesRunning lists the processes whose program (argv[0]) is bin.
func processesRunning(bin string) []string {
	var found []string
	for _, p := range processesMentioning(bin) {
		if _, cmdline, _ := strings.Cut(p, ": "); strings.HasPrefix(cmdline, bin+" ") || cmdline == bin {
			found = append(found, p)
		}
	}
	return found
}

var exitLine = regexp.MustCompile(`(?m)^EXIT=\d+`)

// jobEnd is bash's notice of job 1's end, with how it ended.
var jobEnd = regexp.MustCompile(`\[1\]\+\s+(Exit \d+|Done|Terminated|Killed|Hangup|Interrupt)\s`)

// A learn started in the background wants the terminal, so it stops (as
// less does) instead of drawing over the shell; kill %1 (SIGTERM, then
// SIGCONT) ends it, with its PostgreSQL, rather than leaving it stopped
// on SIGTTOU until someone types fg.
func TestBinaryInTmuxBackgroundJobEndsOnSIGTERM(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	tmp := t.TempDir()
	p := newPrivateTmux(t)
	p.run("new-session", "-d", "-s", "main", "-x", "120", "-y", "30",
		"-e", "XDG_STATE_HOME="+t.TempDir(), "-e", "TMPDIR="+tmp,
		"bash --norc --noprofile -i")
	p.run("send-keys", "-t", "main", "PS1='$ '; set -b", "Enter")
	p.run("send-keys", "-t", "main", bin+" play lost-answer &", "Enter")
	p.waitFor(regexp.MustCompile(`Stopped.*play lost-answer`))
	// The job's end as bash reports it (set -b: at once). Not "wait %1":
	// bash may still count the job as stopped when the wait begins, and
	// then answers 150 (SIGTTOU) at once, before the SIGCONT lands.
	p.run("send-keys", "-t", "main", "kill %1", "Enter")
	scr := p.waitFor(jobEnd)
	if m := jobEnd.FindStringSubmatch(scr); m[1] != "Exit 143" || !strings.Contains(scr, "learn: terminated") {
		t.Errorf("want the job's end as Exit 143 and \"learn: terminated\", got %q; the pane:\n%s", m[1], scr)
	}
	waitGone(t, bin, tmp)
}

// Ctrl-C is "interrupted" and exit 130 wherever it comes: read as a key by
// the app, or as the signal (a terminal not in raw mode, kill -INT) while
// the app runs and PostgreSQL may still be starting. (The signal that
// comes while the runtime itself starts, before learn can catch it, is
// TestRun/sigint of the supervisor.)
func TestBinaryInTmuxCtrlCIsInterrupted(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	for _, how := range []string{"key", "signal"} {
		t.Run(how, func(t *testing.T) {
			tmp := t.TempDir()
			p := newPrivateTmux(t)
			p.run("new-session", "-d", "-s", "main", "-x", "100", "-y", "30",
				"-e", "XDG_STATE_HOME="+t.TempDir(), "-e", "TMPDIR="+tmp,
				bin+"; echo EXIT=$?; sleep 30")
			p.waitFor(regexp.MustCompile(`Lesson: Idempotency`))
			if how == "key" {
				p.run("send-keys", "-t", "main", "C-c")
			} else if out, err := exec.Command("pkill", "-INT", "-f", "^"+bin+"$").CombinedOutput(); err != nil {
				t.Fatalf("pkill: %v\n%s", err, out)
			}
			scr := p.waitFor(exitLine)
			if !strings.Contains(scr, "EXIT=130") || !strings.Contains(scr, "learn: interrupted") {
				t.Errorf("want exit 130 and \"learn: interrupted\"; the pane:\n%s", scr)
			}
			for _, bad := range []string{"killed", "crashed", "context canceled"} {
				if strings.Contains(scr, bad) {
					t.Errorf("the pane says %q:\n%s", bad, scr)
				}
			}
			waitGone(t, bin, tmp)
		})
	}
}

// After a crash the shell gets its keys as before: the app turned on
// xterm's modifyOtherKeys (Bubble Tea does, and tmux passes it on with
// extended-keys), and the crash path turns it off again, so Ctrl-Enter
// reaches cat as a plain Enter, not as ^[[13;5u. On the play screen the
// app also turned the mouse on (button events, SGR): off again too (one
// reset sequence of seventeen modes was dropped whole by tmux, leaving the
// mouse on).
func TestBinaryInTmuxCrashResetsKeyboardModes(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	for _, args := range []string{"", " play lost-answer"} {
		t.Run("learn"+args, func(t *testing.T) {
			p := newPrivateTmux(t)
			p.run("new-session", "-d", "-s", "main", "-x", "120", "-y", "30",
				"-e", "XDG_STATE_HOME="+t.TempDir(), "-e", "TMPDIR="+t.TempDir(), "-e", "LEARN_CRASH_AFTER=1500ms",
				bin+args+"; echo EXIT=$?; cat -v")
			p.run("set", "-s", "extended-keys", "on")
			scr := p.waitFor(exitLine)
			if !strings.Contains(scr, "EXIT=2") || !strings.Contains(scr, "learn crashed") {
				t.Fatalf("no crash; the pane:\n%s", scr)
			}
			p.run("send-keys", "-t", "main", "C-Enter", "after-crash", "Enter")
			scr = p.waitFor(regexp.MustCompile(`after-crash`))
			for _, extended := range []string{"13;5u", "27;5;13~"} {
				if strings.Contains(scr, extended) {
					t.Errorf("Ctrl-Enter arrived as a modified key (%s): a keyboard mode is still on; the pane:\n%s", extended, scr)
				}
			}
			for _, flag := range []string{"alternate_on", "mouse_any_flag", "mouse_button_flag", "mouse_sgr_flag", "keypad_cursor_flag"} {
				out, err := p.cmd("display", "-p", "-t", "main", "#{"+flag+"}").Output()
				if err != nil {
					t.Fatal(err)
				}
				if v := strings.TrimSpace(string(out)); v != "0" {
					t.Errorf("%s is %s after the crash, want 0", flag, v)
				}
			}
		})
	}
}

// A headless command whose output is no terminal crashes without a word
// about a terminal: there was none to restore.
func TestBinaryHeadlessCrashSaysNothingOfATerminal(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	cmd := exec.Command(bin, "demo", "lost-answer")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "TMPDIR="+t.TempDir(), "LEARN_CRASH_AFTER=1ms")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 {
		t.Fatalf("exit %d (%v), want 2 (a crash)\n%s", code, err, out)
	}
	if !strings.Contains(string(out), "learn crashed") {
		t.Errorf("no crash report:\n%s", out)
	}
	if strings.Contains(string(out), "terminal") {
		t.Errorf("a headless crash speaks of a terminal:\n%s", out)
	}
}
