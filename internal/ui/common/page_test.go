package common

import (
	"testing"

	"github.com/learn-idempotency/learn/progress"
)

// Two places are on one screen when the page, the name, the scenario's
// design and a quiz's question agree; a lesson's section and the drill's
// prompt are places on one screen; the zero Place is on none.
func TestSameScreen(t *testing.T) {
	play := func(name, variant string) progress.Place {
		return progress.Place{Page: progress.PagePlay, Name: name, Variant: variant}
	}
	quiz := func(step int) progress.Place {
		return progress.Place{Page: progress.PageQuiz, Name: "checkpoint", Step: step}
	}
	reader := func(slug, section string) progress.Place {
		return progress.Place{Page: progress.PageReader, Name: slug, Section: section}
	}
	for _, c := range []struct {
		name string
		a, b progress.Place
		same bool
	}{
		{"the race", progress.Place{Page: progress.PageRace}, progress.Place{Page: progress.PageRace}, true},
		{"the race and the lab", progress.Place{Page: progress.PageRace}, progress.Place{Page: progress.PageLab}, false},
		{"a scenario, its design named or not", play("lost-answer", "correct"), play("lost-answer", ""), true},
		{"a scenario in its two designs", play("lost-answer", "correct"), play("lost-answer", "broken"), false},
		{"two scenarios", play("lost-answer", "broken"), play("last-seats", "broken"), false},
		{"one question", quiz(2), quiz(2), true},
		{"two questions", quiz(2), quiz(0), false},
		{"two sections of a lesson", reader("idempotency", "Picture it"), reader("idempotency", ""), true},
		{"two lessons", reader("idempotency", ""), reader("retry-across-instances", ""), false},
		{"two prompts of the drill", progress.Place{Page: progress.PageDrill, Step: 3}, progress.Place{Page: progress.PageDrill}, true},
		{"nowhere", progress.Place{}, progress.Place{}, false},
	} {
		if got := SameScreen(c.a, c.b); got != c.same {
			t.Errorf("%s: SameScreen(%+v, %+v) = %v, want %v", c.name, c.a, c.b, got, c.same)
		}
		if got := SameScreen(c.b, c.a); got != c.same {
			t.Errorf("%s: SameScreen(%+v, %+v) = %v, want %v", c.name, c.b, c.a, got, c.same)
		}
	}
}
