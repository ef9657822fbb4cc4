package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// hexRun is the random part of a screen (the idempotency keys).
var hexRun = regexp.MustCompile(`[0-9a-f]{4,}`)

// shape is a screen reduced to what widths decide: each line's length in
// cells (runes: nothing on these screens is wide) and where its box edges
// (│ ╭ ╮ ╰ ╯) stand, the random keys masked.
func shape(screen string) []string {
	var out []string
	for _, l := range strings.Split(hexRun.ReplaceAllString(screen, "x"), "\n") {
		rs := []rune(strings.TrimRight(l, " "))
		var edges []int
		for i, r := range rs {
			if strings.ContainsRune("│╭╮╰╯", r) {
				edges = append(edges, i)
			}
		}
		out = append(out, fmt.Sprintf("%d %v", len(rs), edges))
	}
	return out
}

// learn draws its screens the same with RUNEWIDTH_EASTASIAN=1 as without:
// widths are measured one way everywhere, the box-drawing characters and
// arrows one cell each, as the terminal draws them. Before, x/ansi (and so
// Lip Gloss and Bubble Tea's renderer) took them as two cells while the
// sequence diagram took them as one: borders at half length, right borders
// missing, arrow rows split.
func TestBinaryInTmuxWidthsIgnoreRUNEWIDTH_EASTASIAN(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	screens := map[string]string{}
	for _, env := range []string{"RUNEWIDTH_EASTASIAN=0", "RUNEWIDTH_EASTASIAN=1"} {
		s := startTmuxArgs(t, bin, []string{"play", "lost-answer"}, 120, 30, env, "TMPDIR="+t.TempDir())
		s.waitFor("step 1 ·")
		s.send("n")
		screens[env] = s.waitFor("step 2 ·")
		s.send("q")
		s.waitFor("EXIT=0")
	}
	want, got := shape(screens["RUNEWIDTH_EASTASIAN=0"]), shape(screens["RUNEWIDTH_EASTASIAN=1"])
	for i := range max(len(want), len(got)) {
		if i >= len(want) || i >= len(got) || want[i] != got[i] {
			t.Fatalf("with RUNEWIDTH_EASTASIAN=1 line %d is drawn otherwise:\n%s\nwithout it:\n%s",
				i+1, screens["RUNEWIDTH_EASTASIAN=1"], screens["RUNEWIDTH_EASTASIAN=0"])
		}
	}
	if !strings.Contains(screens["RUNEWIDTH_EASTASIAN=0"], "╮╭") {
		t.Fatalf("the play screen has no panes side by side to compare:\n%s", screens["RUNEWIDTH_EASTASIAN=0"])
	}
}
