package home

import (
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// newHome is the home screen at 80x24 with no saved progress: no resume
// entry.
func newHome() *Model {
	c := &common.Common{Width: 80, Height: 24, Styles: common.NewStyles(true), Keys: common.NewKeyMap(), Progress: common.OpenProgress(nil)}
	return New(c)
}

// titles are the titles of items.
func titles(items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.title
	}
	return out
}

// The home screen lists the entries in the order a learner needs them:
// the lesson, the lost answer played, the Checkpoint, Redraw it, the
// scenarios and the race, Break it, Predict then run, the design lab and
// its challenges, writing it yourself, the interview card, the drill.
func TestHomeFollowsTheLearningPath(t *testing.T) {
	want := []string{"Lesson: Idempotency", "Play: the lost answer", "Checkpoint (", "Redraw it (", "Scenarios: all ",
		"Race: N copies", "Break it (", "Predict, then run (", "Design lab: ", "Write it yourself: ", "Interview card: ", "Interview drill"}
	got := titles(newHome().entries())
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("entry %d is %q, want %q…; the menu:\n%s", i+1, got[i], w, strings.Join(got, "\n"))
		}
	}
}

// Sets are placed by their IDs, wherever quiz.Sets() lists them; a set
// that is not placed by its ID (a "predict, then run" set, say) comes
// right after Break it, in the order the sets list them. The blank lines
// part learn it | recall it | break it and build it | say it.
func TestSetsArePlacedByTheirIDs(t *testing.T) {
	sets := quiz.Sets()
	first := quiz.Set{ID: "first", Title: "First", Questions: []quiz.Question{{}}}
	later := quiz.Set{ID: "later", Title: "Later", Questions: []quiz.Question{{}}}
	got := titles(learningPath(append([]quiz.Set{first}, append(slices.Clone(sets), later)...), "learn-exercises"))
	want := []string{"Lesson: ", "Play: ", "Checkpoint (", "Redraw it (", "Scenarios: ", "Race: ", "Break it (",
		"First (1 question)", "Predict, then run (", "Later (1 question)", "Design lab: ", "Write it yourself: ", "Interview card: ", "Interview drill"}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("entry %d is %q, want %q…; the menu:\n%s", i+1, got[i], w, strings.Join(got, "\n"))
		}
	}
	var gaps []string
	for _, it := range learningPath(sets, "learn-exercises") {
		if it.gapAfter {
			gaps = append(gaps, it.title)
		}
	}
	if want := []string{"Play: the lost answer", "Redraw it (1 question)", "Write it yourself: the booking transaction in Go and pgx"}; !slices.Equal(gaps, want) {
		t.Errorf("blank lines after %q, want after %q", gaps, want)
	}
}

// Where the exercises cannot run the learner's code (over SSH), their
// entry stays on the menu, opens nothing, and says why in one line.
func TestTheExercisesAreNotOfferedWithoutADirectory(t *testing.T) {
	for _, dir := range []string{"learn-exercises", ""} {
		for _, it := range learningPath(quiz.Sets(), dir) {
			if !strings.HasPrefix(it.title, "Write it yourself") {
				continue
			}
			offered := it.open.Page == progress.PageExercises && it.status != nil && !strings.Contains(it.desc, "not offered")
			notOffered := it.open.Page == "" && it.status == nil && it.desc == "not offered here: "+common.NoExercises
			if dir != "" && !offered || dir == "" && !notOffered {
				t.Errorf("exercises in %q: opens %q, says %q", dir, it.open.Page, it.desc)
			}
		}
	}
}
