package quiz

import (
	"fmt"
	"slices"

	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/engine"
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
	// Reads names the scenarios whose rows Goal reads; nil means every
	// one (the goal needs the whole scorecard).
	Reads []string
	// Goal checks a design and its scorecard: ok when the challenge is
	// met; otherwise why says, in one line, what is not met yet.
	Goal func(d sim.Switches, card sim.Scorecard) (ok bool, why string)
}

// Challenges are the design lab's challenges, easiest first.
func Challenges() []Challenge {
	return []Challenge{
		{
			ID: "lab/last-seats", Title: "The last seats",
			Prompt: "One switch makes the last seats refuse a booking the user already has. Find one such switch.",
			Reads:  []string{"last-seats"},
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
			Prompt: "This design double-books when an answer is lost: the key is never looked up, and nothing in the schema stops a second row. Set one of those two switches back to the lesson's value and the lost answer is safe again: watch which guard acts.",
			Start:  oneGuardStart,
			Reads:  []string{"lost-answer"},
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				if n := changedFrom(oneGuardStart, d); n != 1 {
					return false, fmt.Sprintf("change exactly one switch of the design you started from (%d changed)", n)
				}
				if d.Lookup != engine.LookupAfterLock && d.Constraint != engine.UniquePerUser {
					return false, "set the lookup or the constraint back to the lesson's value"
				}
				if r, _ := card.Of("lost-answer"); !r.Pass {
					return false, "the lost answer still double-books"
				}
				return true, ""
			},
		},
		{
			ID: "lab/two-switches", Title: "Redis in front, the row behind",
			Prompt: "This design double-books when an answer is lost, and again after a crash or a long wait: the client makes a new key for every try, and the keys live only in Redis, with nothing in the row to stop a second booking. Keep Redis in front: two switches make it safe against every scenario. Find them.",
			Start:  twoSwitchesStart,
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				if n := changedFrom(twoSwitchesStart, d); n > 2 {
					return false, fmt.Sprintf("use two switches (%d changed)", n)
				}
				if d.Store != sim.KeysInRedis {
					return false, "keep store=redis-ttl: the challenge is to make Redis safe, not to take it out"
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
			Reads:  []string{"key-reuse-two-events"},
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				if n := len(d.Changed()); n != 1 {
					return false, fmt.Sprintf("change exactly one switch from the lesson's design (%d changed)", n)
				}
				if d.Constraint != engine.NoUnique {
					return false, "that switch alone does not let two events share a key: try another"
				}
				if r, _ := card.Of("key-reuse-two-events"); r.Pass || !slices.Contains(r.Failed, sim.InvOnePerKey) {
					return false, "two events do not share a key yet"
				}
				return true, ""
			},
		},
		{
			ID: "lab/harmless-alone", Title: "Two guards, one race",
			Prompt: "Simultaneous copies are stopped twice over: the row lock makes each later copy find the booking at its lookup, and the unique constraint refuses a second INSERT. Each switch alone leaves the copies safe, but two together let every copy make a booking of its own. Find such a pair.",
			Reads:  []string{"concurrent-copies"},
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				if n := len(d.Changed()); n != 2 {
					return false, fmt.Sprintf("change exactly two switches from the lesson's design (%d changed)", n)
				}
				r, _ := card.Of("concurrent-copies")
				if r.Pass || !slices.Contains(r.Failed, sim.InvOneBookingPerIntent) {
					return false, "simultaneous copies still make one booking: one guard is still standing"
				}
				return true, ""
			},
		},
		{
			ID: "lab/leak", Title: "Whose booking is it?",
			Prompt: "One user's key must never reveal or replay another user's booking. Two switches together make ben, who happens to send ada's key, be answered with ada's booking. Find them.",
			Reads:  []string{"two-users-same-key"},
			Goal: func(d sim.Switches, card sim.Scorecard) (bool, string) {
				if n := len(d.Changed()); n != 2 {
					return false, fmt.Sprintf("change exactly two switches from the lesson's design (%d changed)", n)
				}
				r, _ := card.Of("two-users-same-key")
				if r.Pass || !slices.Contains(r.Failed, sim.InvAnswerIsOwn) {
					return false, "ben does not see ada's booking yet"
				}
				return true, ""
			},
		},
	}
}

// The designs two challenges start from.
var (
	oneGuardStart    = sim.Switches{Lookup: engine.NoLookup, Constraint: engine.NoUnique}
	twoSwitchesStart = sim.Switches{KeyPerRetry: true, Store: sim.KeysInRedis, Constraint: engine.NoUnique}
)

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

// ChallengesPassed counts the design lab's challenges ([Challenges]) the
// learner has passed: IDs this learn does not have are not counted, so it
// is never more than len(Challenges()). The home screen and `learn
// progress` both show it as "N of 6".
func ChallengesPassed(p *progress.Progress) int {
	n := 0
	for _, c := range Challenges() {
		if _, ok := p.Challenges[c.ID]; ok {
			n++
		}
	}
	return n
}
