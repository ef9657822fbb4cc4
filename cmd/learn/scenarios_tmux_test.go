package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
)

// Every scenario, in each of its variants, played to its end in the built
// binary at 80x24 and 120x30, ends in its story and its verdict: the summary
// of the run, ✓ for the correct design and ✗ for a broken one, and for a
// broken one a diagnosis with its symptom, cause, place to look and fix.
// No line of those frames is cut with "…" unless its whole text is on the
// same screen.
func TestEveryScenarioEndsInItsStoryAndVerdict(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
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
						t.Parallel()
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
	ts.waitFor("step 1")
	ts.stepToTheSummary()
	mark := "✓ "
	if v == sim.Broken {
		mark = "✗ "
	}
	// tmux takes a frame from the terminal in pieces and shows each as it
	// comes: a pane read as the summary's header shows may still hold the
	// step before below it. So the checks are what the wait waits for,
	// again at each change of the pane, until the whole frame passes them;
	// one that never does fails with the pane and what it lacks.
	ts.frameWhere(name+", summary", func(scr string) []string {
		var lacks []string
		for _, want := range []string{mark, "API + Postgres", "answers "} {
			if !strings.Contains(scr, want) {
				lacks = append(lacks, fmt.Sprintf("the summary lacks its story or its verdict: no %q", want))
			}
		}
		return append(lacks, cutMessages(scr)...)
	})
	if v == sim.Broken {
		ts.send("n")
		ts.waitFor("diagnosis · ")
		ts.frameWhere(name+", diagnosis", func(scr string) []string {
			var lacks []string
			for _, want := range []string{"✗ ", "symptom", "cause", "look at", "fix", "broken: "} {
				if !strings.Contains(scr, want) {
					lacks = append(lacks, fmt.Sprintf("the diagnosis lacks %q", want))
				}
			}
			return append(lacks, cutMessages(scr)...)
		})
	}
	ts.send("q")
	ts.waitFor("EXIT=0")
}

// cutWord is the word an ellipsis ends.
var cutWord = regexp.MustCompile(`([\p{L}\p{N}_./-]{2,})…`)

// cutsWithoutWhole lists every word cut with "…" whose whole form (the same
// letters followed by more, or by anything but "…") is nowhere else on the
// screen.
func cutsWithoutWhole(screen string) []string {
	var out []string
	for _, m := range cutWord.FindAllStringSubmatch(screen, -1) {
		// The whole word goes on past the cut, or the cut fell after a
		// whole word ("… for…" of "for 200ms"): either is on the screen
		// somewhere not followed by "…".
		whole := regexp.MustCompile(regexp.QuoteMeta(m[1]) + `[^…]`)
		if !whole.MatchString(screen) {
			out = append(out, m[0])
		}
	}
	return out
}

// cutMessages says, for each word on screen cut with "…" whose whole
// text is not on the same screen, that it is cut.
func cutMessages(screen string) []string {
	var out []string
	for _, cut := range cutsWithoutWhole(screen) {
		out = append(out, fmt.Sprintf("%q is cut and its whole text is not on the screen", cut))
	}
	return out
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
	if got := cutsWithoutWhole("◀╌ 503 The event stayed locked by other transactions for… ╌╌\nanswers 503 The event stayed locked by other transactions for 200ms"); len(got) != 0 {
		t.Errorf("a cut after a whole word, whose text is on the screen, was reported: %q", got)
	}
}

// frameWhere waits until the pane passes check (which lists what the
// pane lacks, nothing once it passes), reading it again at each of its
// changes, and returns it; what if it never does is said, with the last
// pane, shortly before the test binary's -timeout.
func (s *tmuxSession) frameWhere(what string, check func(scr string) []string) string {
	s.t.Helper()
	var lacks []string
	return s.until(func(scr string) bool {
		lacks = check(scr)
		return len(lacks) == 0
	}, func() string { return what + ": " + strings.Join(lacks, "; ") })
}

// stepNumber is the number of the step the play screen shows in its
// header ("step 5", "step 5/12", "step 5 of 7 so far"): the first on the
// pane.
var stepNumber = regexp.MustCompile(`step (\d+)`)

// stepToTheSummary presses n, each press once the one before has moved
// the play screen on a step, until the run's summary shows, and returns
// it. No press is left over to go on to the diagnosis behind it.
func (s *tmuxSession) stepToTheSummary() string {
	s.t.Helper()
	scr := s.screen()
	for !strings.Contains(scr, "summary of") {
		m := stepNumber.FindStringSubmatch(scr)
		if m == nil {
			s.t.Fatalf("no step number on the play screen:\n%s", scr)
		}
		s.send("n")
		scr = s.until(func(scr string) bool {
			now := stepNumber.FindStringSubmatch(scr)
			return strings.Contains(scr, "summary of") || now != nil && now[1] != m[1]
		}, func() string { return "the step after step " + m[1] })
	}
	return scr
}
