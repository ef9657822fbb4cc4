package sim

import (
	"fmt"
	"slices"

	"github.com/dustin/go-humanize/english"
)

// LabResult is what one scenario's world showed under a design of the
// design lab: whether the guarantee held, the consequence in the user's
// terms, and the invariants that failed; or why it could not run.
type LabResult struct {
	Scenario    string   `json:"name"`
	Title       string   `json:"title"`
	Pass        bool     `json:"pass"`
	Consequence string   `json:"consequence"` // the verdict's one line: the guarantee, or what the user suffers
	Failed      []string `json:"failed_invariants"`
	Guards      Guards   `json:"guards"`          // what stopped repeats in the run
	Error       string   `json:"error,omitempty"` // why the scenario could not run under this design
}

// ResultOf is the lab's line for report rep of a run of s.
func ResultOf(s *Scenario, rep *Report) LabResult {
	v := s.Verdict(rep)
	res := LabResult{Scenario: s.Name, Title: s.Title, Pass: v.Held, Consequence: v.Says, Failed: []string{}, Guards: rep.Guards}
	for _, inv := range v.Failed {
		res.Failed = append(res.Failed, inv.Name)
	}
	return res
}

// CouldNotRun is the lab's line for a scenario that could not run under
// the design, with why.
func CouldNotRun(s *Scenario, err error) LabResult {
	return LabResult{Scenario: s.Name, Title: s.Title, Failed: []string{}, Error: err.Error(),
		Consequence: "could not run under this design: " + err.Error()}
}

// Scorecard is every scenario under one design, in the order of the
// scenarios.
type Scorecard struct {
	Design      Switches      `json:"design"`
	NotApplying []NotApplying `json:"not_applying"` // the design's switches that act on nothing, with why
	Scenarios   []LabResult   `json:"scenarios"`
	Safe        int           `json:"safe"`  // scenarios whose guarantee held
	Total       int           `json:"total"` // scenarios that ran
	Summary     string        `json:"summary"`
}

// Score makes the scorecard of design d from its results, in scenario
// order.
func Score(d Switches, results []LabResult) Scorecard {
	order := map[string]int{}
	for i, s := range scenarios {
		order[s.Name] = i
	}
	results = slices.Clone(results)
	slices.SortFunc(results, func(a, b LabResult) int { return order[a.Scenario] - order[b.Scenario] })
	c := Scorecard{Design: d, NotApplying: nonNil(d.NotApplying()), Scenarios: results}
	notRun := 0
	for _, r := range results {
		switch {
		case r.Error != "":
			notRun++
		case r.Pass:
			c.Safe++
			c.Total++
		default:
			c.Total++
		}
	}
	c.Summary = fmt.Sprintf("safe against %d of %s", c.Safe, english.Plural(c.Total, "scenario", ""))
	if notRun > 0 {
		c.Summary += fmt.Sprintf("; %s could not run", english.Plural(notRun, "scenario", ""))
	}
	return c
}

// Of is the result of the named scenario on the scorecard.
func (c Scorecard) Of(name string) (LabResult, bool) {
	i := slices.IndexFunc(c.Scenarios, func(r LabResult) bool { return r.Scenario == name })
	if i < 0 {
		return LabResult{}, false
	}
	return c.Scenarios[i], true
}
