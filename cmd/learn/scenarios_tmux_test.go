package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/sim"
)

// Every scenario, in each of its variants, played to its end in the built
// binary at 80x24 and 120x30, ends in its story and its verdict: the summary
// of the run, ✓ for the correct design and ✗ for a broken one, and for a
// broken one a diagnosis with its symptom, cause, place to look and fix.
// No line of those frames is cut with "…" unless its whole text is on the
// same screen.
func TestEveryScenarioEndsInItsStoryAndVerdict(t *testing.T) {
	bin := buildLearn(t)
	for _, size := range [][2]int{{80, 24}, {120, 30}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			for _, s := range sim.Scenarios() {
				variants := []sim.Variant{sim.Correct}
				if s.HasBroken() {
					variants = append(variants, sim.Broken)
				}
				for _, v := range variants {
					t.Run(s.Name+"/"+string(v), func(t *testing.T) {
						playToTheEnd(t, bin, s, v, size[0], size[1])
					})
				}
			}
		})
	}
}

// playToTheEnd plays variant v of s in tmux and checks its last frames.
func playToTheEnd(t *testing.T, bin string, s *sim.Scenario, v sim.Variant, w, h int) {
	t.Helper()
	name := fmt.Sprintf("%s/%s at %dx%d", s.Name, v, w, h)
	ts := startTmuxArgs(t, bin, []string{"play", s.Name, "--variant", string(v), "--database-url", "'" + testDB.ConnString() + "'"}, w, h)
	ts.waitFor("step 1", 60*time.Second)
	// Presses that come before their step are kept for it: one burst
	// walks the whole run to its summary.
	if out, err := exec.Command("tmux", "send-keys", "-t", ts.target(), "-N", "400", "n").CombinedOutput(); err != nil {
		t.Fatalf("send-keys: %v\n%s", err, out)
	}
	// Presses left over when a short run ends go on to its diagnosis, and
	// tmux hands them over after send-keys returns: wait until the burst
	// is spent (the pane holds still) before going back to the story.
	summary := ts.settleOn(60*time.Second, "summary of", "diagnosis · ", "p")
	mark := "✓ "
	if v == sim.Broken {
		mark = "✗ "
	}
	if !strings.Contains(summary, mark) || !strings.Contains(summary, "API + Postgres") || !strings.Contains(summary, "answers ") {
		t.Errorf("%s: the summary lacks its story or its verdict %q:\n%s", name, mark, summary)
	}
	checkNothingCut(t, name+", summary", summary)
	if v == sim.Broken {
		ts.send("n")
		d := ts.waitFor("diagnosis · ", 30*time.Second)
		for _, want := range []string{"✗ ", "symptom", "cause", "look at", "fix", "broken: "} {
			if !strings.Contains(d, want) {
				t.Errorf("%s: the diagnosis lacks %q:\n%s", name, want, d)
			}
		}
		checkNothingCut(t, name+", diagnosis", d)
	}
	ts.send("q")
	ts.waitFor("EXIT=0", 30*time.Second)
}

// cutWord is the word an ellipsis ends.
var cutWord = regexp.MustCompile(`([\p{L}\p{N}_./-]{2,})…`)

// cutsWithoutWhole lists every word cut with "…" whose whole form (the same
// letters followed by more) is nowhere else on the screen.
func cutsWithoutWhole(screen string) []string {
	var out []string
	for _, m := range cutWord.FindAllStringSubmatch(screen, -1) {
		whole := regexp.MustCompile(regexp.QuoteMeta(m[1]) + `[\p{L}\p{N}]`)
		if !whole.MatchString(screen) {
			out = append(out, m[0])
		}
	}
	return out
}

func checkNothingCut(t *testing.T, what, screen string) {
	t.Helper()
	for _, cut := range cutsWithoutWhole(screen) {
		t.Errorf("%s: %q is cut and its whole text is not on the screen:\n%s", what, cut, screen)
	}
}

// The check above can fail: a cut word whose whole is elsewhere passes, one
// whose whole is nowhere fails.
func TestCutsWithoutWhole(t *testing.T) {
	if got := cutsWithoutWhole("409 This idempotency key was already used for a diffe…\nanswers 409 … for a different booking"); len(got) != 0 {
		t.Errorf("a cut whose whole text is on the screen was reported: %q", got)
	}
	if got := cutsWithoutWhole("Play: One key, two events, same insta… · correct"); len(got) != 1 || got[0] != "insta…" {
		t.Errorf("a cut whose whole text is nowhere: %q", got)
	}
}

// settleOn waits until the pane shows want and has held still for a
// second, and returns it. A pane that holds still on other instead gets
// key, once per time it settles there.
func (s *tmuxSession) settleOn(timeout time.Duration, want, other, key string) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	last, since := "", time.Now()
	for {
		scr := s.screen()
		if scr != last {
			last, since = scr, time.Now()
		} else if time.Since(since) >= time.Second {
			switch {
			case strings.Contains(scr, want):
				return scr
			case strings.Contains(scr, other):
				s.send(key)
				last = ""
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%q never held still on the pane; the pane:\n%s", want, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
