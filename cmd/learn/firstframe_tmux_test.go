package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/internal/supervisor"
)

// Keys pressed as soon as the first screen shows, perhaps before the app's
// own process reads them, reach the app as the same keys: the first frame
// drawn by the parent holds the terminal raw, so Enter stays Enter and
// nothing is echoed over the screen. (Keys typed before learn runs at all
// meet the shell's cooked terminal, as for any program.)
func TestFirstFrameKeysTypedAheadReachTheApp(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{[]string{"j", "Enter"}, "Play: The lost answer"},
		{[]string{"Enter"}, "In 1 minute"},
	} {
		// The app's process takes a second to start, as on a loaded
		// machine: the keys come while only the first frame is there.
		s := startTmux(t, bin, 80, 24, supervisor.EnvSlowStart+"=1s")
		s.waitFor("Lesson: Idempotency")
		s.send(tc.keys...)
		scr := s.waitFor(tc.want)
		if strings.Contains(scr, "^M") || strings.Contains(scr, "^J") {
			t.Errorf("a typed-ahead key was echoed:\n%s", scr)
		}
		s.send("q")
		s.waitFor("EXIT=0")
	}
}

// A command line the app's process refuses (a LEARN_POSTGRES it cannot
// take) leaves no frame behind: the error is on the normal screen and the
// terminal is back in cooked mode.
func TestFirstFrameNeverOutlivesARefusal(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	requireTool(t, "tmux")
	name := fmt.Sprintf("learn-refused-%d", time.Now().UnixNano())
	script := fmt.Sprintf("env XDG_STATE_HOME=%s LEARN_POSTGRES=nonsense %s; echo EXIT=$?; stty -a | grep -o -- '-\\?icanon' | sed 's/^/MODE=/'; sleep 30", t.TempDir(), bin)
	if out, err := exec.Command("tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", script).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", exactTarget(name)).Run() })
	s := &tmuxSession{t: t, name: name}
	scr := s.waitFor("MODE=")
	for _, want := range []string{"LEARN_POSTGRES=nonsense", "EXIT=2", "MODE=icanon"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the pane lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "Lesson: Idempotency") {
		t.Errorf("the first frame is still shown:\n%s", scr)
	}
}
