package checklist

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/quiz"
)

var st = common.NewStyles(true)

// flat is out without styles, its words joined by single spaces.
func flat(out string) string { return strings.Join(strings.Fields(ansi.Strip(out)), " ") }

func list(typed string, spoken bool, cursor int) Checklist {
	return Checklist{Typed: typed, Spoken: spoken, Model: "The model says alpha and then, at some length, beta.",
		Points: []string{"Alpha comes first", "Beta is the second point, long enough to wrap onto a second line at forty columns"},
		Cues:   []quiz.Cue{{{"alpha"}}, {{"beta"}}}, Ticked: []bool{true, false}, Cursor: cursor}
}

// The lines View returns for the cursor are the point under it, whole;
// each point the text does not mention is marked, and only those.
func TestViewKeepsTheCursorsPointAndMarksWhatIsNotSaid(t *testing.T) {
	for _, cursor := range []int{0, 1} {
		out, from, to := list("alpha only", false, cursor).View(st, 40)
		lines := strings.Split(ansi.Strip(out), "\n")
		got := strings.Join(strings.Fields(strings.Join(lines[from:to+1], " ")), " ")
		want := "▸ " + map[int]string{0: "[x] Alpha comes first", 1: "[ ] Beta is the second point, long enough to wrap onto a second line at forty columns " + NotMentioned}[cursor]
		if got != want {
			t.Errorf("cursor %d: lines %d-%d are %q, want %q", cursor, from, to, got, want)
		}
		if n := strings.Count(flat(out), NotMentioned); n != 1 {
			t.Errorf("cursor %d: %d marks, want the one on beta:\n%s", cursor, n, ansi.Strip(out))
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > 40 {
				t.Errorf("%q is wider than 40", l)
			}
		}
	}
}

// The rule on screen says how the ticks count: half for a point not
// mentioned, and nothing checked for an answer said aloud.
func TestTheRuleIsSaid(t *testing.T) {
	spoken, _, _ := list("", true, 0).View(st, 80)
	if s := flat(spoken); !strings.Contains(s, "you said it aloud") || strings.Contains(s, NotMentioned) || strings.Contains(s, "You wrote") {
		t.Errorf("an answer said aloud:\n%s", s)
	}
	blank, _, _ := list("  ", false, 0).View(st, 80)
	if s := flat(blank); !strings.Contains(s, "You wrote nothing.") || !strings.Contains(s, "each ticked point counts half") || strings.Count(s, NotMentioned) != 2 {
		t.Errorf("a short answer left empty:\n%s", s)
	}
	typed, _, _ := list("alpha", false, 0).View(st, 80)
	if s := flat(typed); !strings.Contains(s, "You wrote: alpha") || !strings.Contains(s, "counts half when ticked") {
		t.Errorf("a typed answer:\n%s", s)
	}
}
