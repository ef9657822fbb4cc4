package quiz

import (
	"fmt"
	"slices"
	"time"

	"github.com/learn-idempotency/learn/sim"
)

// Challenge is a goal-checked puzzle of the design lab (Learn Git
// Branching's levels are the model): it starts from a design and is passed
// when the learner's design, and the scorecard of its run, show what it
// asks.
type Challenge struct {
	ID     string // stable; keys the learner's progress
	Title  string
	Prompt string
	// Start is the design the challenge opens with.
	Start sim.Switches
	// Goal checks a design and its scorecard: ok when the challenge is
	// met; otherwise why says, in one line, what is not met yet.
	Goal func(d sim.Switches, card sim.Scorecard) (ok bool, why string)
}

// Challenges are the design lab's challenges, easiest first.
func Challenges() []Challenge {
	return []Challenge{
		{
			ID: "lab/last-seats", Title: "The last seats",
			Prompt: "One switch makes the last seats refuse a booking the user already has. Find it.",
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				if n := len(d.Changed()); n != 1 {
					return false, fmt.Sprintf("change exactly one switch from the lesson's design (%d changed)", n)
				}
				r, _ := card.Of("last-seats")
				switch {
				case r.Pass:
					return false, "the last seats still replay the booking: try another switch"
				case !slices.Contains(r.Failed, sim.InvIntentGetsItsBook):
					return false, "the last seats fail, but the user is not refused: they get no answer at all"
				}
				return true, ""
			},
		},
		{
			ID: "lab/one-guard", Title: "Either guard will do",
			Prompt: "This design double-books when an answer is lost: the key is never looked up, and nothing in the schema stops a second row. Turn back one switch that makes the lost answer safe again.",
			Start:  sim.Switches{Lookup: sim.NoLookup, Constraint: sim.NoUnique},
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				start := sim.Switches{Lookup: sim.NoLookup, Constraint: sim.NoUnique}
				if n := changedFrom(start, d); n != 1 {
					return false, fmt.Sprintf("change exactly one switch of the design you started from (%d changed)", n)
				}
				if r, _ := card.Of("lost-answer"); !r.Pass {
					return false, "the lost answer still double-books"
				}
				return true, ""
			},
		},
		{
			ID: "lab/two-switches", Title: "Two switches to safety",
			Prompt: "This design double-books when an answer is lost, and again after a crash or a long wait. Two switches make it safe against every scenario: find them.",
			Start:  sim.Switches{KeyPerRetry: true, Store: sim.KeysInRedis},
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				if n := changedFrom(sim.Switches{KeyPerRetry: true, Store: sim.KeysInRedis}, d); n > 2 {
					return false, fmt.Sprintf("use two switches (%d changed)", n)
				}
				if card.Safe != card.Total || card.Total == 0 {
					return false, card.Summary
				}
				return true, ""
			},
		},
		{
			ID: "lab/two-events", Title: "Two events, one key",
			Prompt: "Which switch is the only thing that stops two events sharing a key? Change it alone and watch One key, two events fail.",
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				if c := d.Changed(); len(c) != 1 || d.Constraint != sim.NoUnique {
					return false, "change one switch, the one that makes the second INSERT fail"
				}
				if r, _ := card.Of("key-reuse-two-events"); r.Pass || !slices.Contains(r.Failed, sim.InvOnePerKey) {
					return false, "two events do not share a key yet"
				}
				return true, ""
			},
		},
		{
			ID: "lab/harmless-alone", Title: "Harmless alone",
			Prompt: "Two switches are each harmless alone, but together make simultaneous copies book once each. Find a pair.",
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				safeAlone := []string{"lookup=before-lock", "lock=none", "constraint=none"}
				c := d.Changed()
				if len(c) != 2 || !slices.Contains(safeAlone, c[0]) || !slices.Contains(safeAlone, c[1]) {
					return false, "change two switches that each leave every scenario safe on their own"
				}
				if r, _ := card.Of("concurrent-copies"); r.Pass {
					return false, "simultaneous copies still make one booking: try another pair"
				}
				return true, ""
			},
		},
	}
}

// changedFrom counts the switches of d that differ from start.
func changedFrom(start, d sim.Switches) int {
	n := 0
	for _, sw := range sim.LabSwitches() {
		if start.Get(sw.Name) != d.Get(sw.Name) {
			n++
		}
	}
	return n
}

// PassChallenge records that the learner passed challenge id at t (the
// first time only).
func (p *Progress) PassChallenge(id string, t time.Time) {
	if p.Challenges == nil {
		p.Challenges = map[string]time.Time{}
	}
	if _, ok := p.Challenges[id]; !ok {
		p.Challenges[id] = t
	}
}

// ChallengesPassed counts the design lab's challenges ([Challenges]) the
// learner has passed: IDs this learn does not have are not counted, so it
// is never more than len(Challenges()). The home screen and `learn
// progress` both show it as "N of 5".
func (p *Progress) ChallengesPassed() int {
	n := 0
	for _, c := range Challenges() {
		if _, ok := p.Challenges[c.ID]; ok {
			n++
		}
	}
	return n
}
