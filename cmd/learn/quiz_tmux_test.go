package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/quiz"
)

// Taken twice in a real terminal at 80x24, the checkpoint shows each of its
// choice questions' options in another order on the second attempt (r
// after the summary): a retake asks what the options say, not where the
// right one sat.
func TestBinaryInTmuxQuizChoicesComeInANewOrder(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	s := startTmux(t, bin, 80, 24)
	s.waitFor("Checkpoint (5 questions)")
	for range 2 { // past the lesson and play
		s.send("j")
	}
	s.waitFor("▸ Checkpoint (5 questions)")
	s.send("Enter")
	set := quiz.Checkpoint()
	var orders [2][]string
	for attempt := range 2 {
		for i, q := range set.Questions {
			s.waitFor(fmt.Sprintf("question %d of %d", i+1, len(set.Questions)))
			if q.Kind == quiz.KindShort {
				s.waitFor("tab when done")
				s.send("Tab")
				s.waitFor("The model answer:")
			} else {
				var order []string
				for c := range q.Choices {
					order = append(order, fmt.Sprint(shownAt(t, s, q.Choices, c)))
				}
				orders[attempt] = append(orders[attempt], q.ID+" "+strings.Join(order, ""))
				if q.Kind == quiz.KindMultiple {
					s.send("Space")
				}
			}
			s.send("Enter")
			s.waitFor("enter next")
			s.send("Enter")
		}
		s.waitFor("Checkpoint: done")
		if attempt == 0 {
			s.send("r")
		}
	}
	if len(orders[0]) != 4 {
		t.Fatalf("read the order of %d choice questions, want 4: %q", len(orders[0]), orders[0])
	}
	for i := range orders[0] {
		if orders[0][i] == orders[1][i] {
			t.Errorf("the same order on both attempts: %s", orders[0][i])
		}
	}
	t.Logf("first attempt %q, second %q", orders[0], orders[1])
	s.send("q")
	s.waitFor("EXIT=0")
}

// shownAt waits until every one of choices is on s's pane and returns the
// position among them of choices[item].
func shownAt(t *testing.T, s *tmuxSession, choices []string, item int) int {
	t.Helper()
	pos := 0
	s.until(func(scr string) bool {
		flat := strings.Join(strings.Fields(scr), " ")
		for _, c := range choices {
			if strings.Count(flat, c) != 1 {
				return false
			}
		}
		pos = 0
		for _, c := range choices {
			if strings.Index(flat, c) < strings.Index(flat, choices[item]) {
				pos++
			}
		}
		return true
	}, func() string { return fmt.Sprintf("every one of the choices %q on the pane", choices) })
	return pos
}
