package live

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/engine"
)

// Every challenge of the lab holds over the design space: its start does
// not pass; searching every design within two switches of the start finds
// at least one that does; a design refused says why; and every design it
// accepts shows, in the runs of its scorecard, exactly what the
// challenge's text claims (checked here from the runs' reports, apart from
// the challenge's own goal).
func TestChallengesHoldOverTheDesignSpace(t *testing.T) {
	t.Parallel() // runs of its own, on schemas of their own
	rs := newRuns(t)
	for _, c := range quiz.Challenges() {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel() // the challenges share the Runs, made for many runs at once
			if ok, _ := c.Goal(c.Start, rs.Lab(t.Context(), c.Start, nil)); ok {
				t.Error("the start already passes")
			}
			var accepted []sim.Switches
			for _, d := range withinTwoSwitches(c.Start) {
				card := cardFor(t, rs, d, c.Reads)
				ok, why := c.Goal(d, card)
				switch {
				case ok:
					accepted = append(accepted, d)
				case why == "":
					t.Errorf("%s is refused without a word", d)
				}
			}
			if len(accepted) == 0 {
				t.Fatal("no design within two switches of the start passes: the challenge has no solution")
			}
			t.Logf("%d designs pass: %v", len(accepted), accepted)
			claim := challengeClaims[c.ID]
			if claim == nil {
				t.Fatalf("no claim check for %s", c.ID)
			}
			for _, d := range accepted {
				full := rs.Lab(t.Context(), d, nil)
				if ok, why := c.Goal(d, full); !ok {
					t.Errorf("%s passes on the rows it reads but not on the whole scorecard: %s", d, why)
				}
				if err := claim(t, rs, c.Start, d, full); err != nil {
					t.Errorf("%s passes, but %v", d, err)
				}
			}
		})
	}
}

// challengeClaims check, for each challenge, what its prompt says of a
// design that passes, from the reports of real runs.
var challengeClaims = map[string]func(t *testing.T, rs *Runs, start, d sim.Switches, card sim.Scorecard) error{
	// "One switch makes the last seats refuse a booking the user already
	// has."
	"lab/last-seats": func(t *testing.T, rs *Runs, _, d sim.Switches, _ sim.Scorecard) error {
		rep := reportOf(t, rs, "last-seats", d)
		last := rep.Attempts[0].Tries[len(rep.Attempts[0].Tries)-1]
		if rep.BookingRows != 1 || last.Status != 409 || last.Code != engine.CodeNotEnoughSeats {
			return fmt.Errorf("last seats: %d rows, the last try got %d %s; want the booking stored and a 409 %s", rep.BookingRows, last.Status, last.Code, engine.CodeNotEnoughSeats)
		}
		return nil
	},
	// "Set one of those two switches back … watch which guard acts."
	"lab/one-guard": func(t *testing.T, rs *Runs, start, d sim.Switches, _ sim.Scorecard) error {
		rep := reportOf(t, rs, "lost-answer", d)
		g := rep.Guards
		switch {
		case d.Lookup != start.Lookup && g.Lookups == 0:
			return fmt.Errorf("the lookup is back but did not act: %+v", g)
		case d.Constraint != start.Constraint && g.Violations == 0:
			return fmt.Errorf("the constraint is back but did not act: %+v", g)
		case rep.BookingRows != 1:
			return fmt.Errorf("lost answer: %d rows", rep.BookingRows)
		}
		return nil
	},
	// "Keep Redis in front: two switches make it safe against every
	// scenario."
	"lab/two-switches": func(t *testing.T, rs *Runs, _, d sim.Switches, card sim.Scorecard) error {
		if card.Safe != len(sim.Scenarios()) {
			return fmt.Errorf("the scorecard says %s", card.Summary)
		}
		rep := reportOf(t, rs, "redis-ttl", d)
		if rep.Guards.RedisHits != 0 || rep.Guards.Violations == 0 || rep.BookingRows != 2 {
			return fmt.Errorf("redis-ttl: guards %+v, %d rows; want Redis missing both keys and the row's constraint rescuing both: 2 rows", rep.Guards, rep.BookingRows)
		}
		return nil
	},
	// "Change it alone and watch One key, two events fail."
	"lab/two-events": func(t *testing.T, rs *Runs, _, d sim.Switches, _ sim.Scorecard) error {
		rep := reportOf(t, rs, "key-reuse-two-events", d)
		if len(rep.Bookings) != 2 || rep.Bookings[0].Key != rep.Bookings[1].Key || rep.Bookings[0].EventID == rep.Bookings[1].EventID {
			return fmt.Errorf("two events: rows %+v; want one key on two events", rep.Bookings)
		}
		return nil
	},
	// "Each switch alone leaves the copies safe, but two together let
	// every copy make a booking of its own."
	"lab/harmless-alone": func(t *testing.T, rs *Runs, _, d sim.Switches, _ sim.Scorecard) error {
		rep := reportOf(t, rs, "concurrent-copies", d)
		if rep.BookingRows != len(rep.Attempts) {
			return fmt.Errorf("%d copies made %d bookings; want one each", len(rep.Attempts), rep.BookingRows)
		}
		for _, one := range d.Changed() {
			alone, err := sim.ParseSwitches([]string{one})
			if err != nil {
				return err
			}
			if r := reportOf(t, rs, "concurrent-copies", alone); r.BookingRows != 1 {
				return fmt.Errorf("%s alone already makes %d bookings of the copies", one, r.BookingRows)
			}
		}
		return nil
	},
	// "ben … is answered with ada's booking."
	"lab/leak": func(t *testing.T, rs *Runs, _, d sim.Switches, _ sim.Scorecard) error {
		rep := reportOf(t, rs, "two-users-same-key", d)
		owner := map[string]string{}
		for _, b := range rep.Bookings {
			owner[b.ID] = b.UserID
		}
		for _, a := range rep.Attempts {
			for _, try := range a.Tries {
				if a.User == "ben" && try.BookingID != "" && owner[try.BookingID] == "ada" {
					return nil
				}
			}
		}
		return fmt.Errorf("no answer gave ben ada's booking: %+v", rep.Attempts)
	},
}

// withinTwoSwitches is every design that differs from start in one or two
// switches, each once by what it runs (Switches.Effective), in a stable
// order.
func withinTwoSwitches(start sim.Switches) []sim.Switches {
	seen := map[sim.Switches]bool{start.Effective(): true}
	var out []sim.Switches
	add := func(d sim.Switches) {
		if !seen[d.Effective()] {
			seen[d.Effective()] = true
			out = append(out, d)
		}
	}
	sws := sim.LabSwitches()
	for i, a := range sws {
		for _, va := range a.Values {
			one, _ := start.With(a.Name, va)
			add(one)
			for _, b := range sws[i+1:] {
				for _, vb := range b.Values {
					two, _ := one.With(b.Name, vb)
					add(two)
				}
			}
		}
	}
	return out
}

// cardFor is the scorecard of d with only the rows of the scenarios named
// (every scenario for nil: the lost answer first, then the rest when it
// held, since a goal that needs them all fails with one row).
func cardFor(t *testing.T, rs *Runs, d sim.Switches, reads []string) sim.Scorecard {
	t.Helper()
	if reads == nil {
		first := cardFor(t, rs, d, []string{"lost-answer"})
		if first.Safe == 0 {
			return first
		}
		return rs.Lab(t.Context(), d, nil)
	}
	var mu sync.Mutex
	var results []sim.LabResult
	var wg sync.WaitGroup
	for _, name := range reads {
		s := scenario(t, name)
		wg.Go(func() {
			design := d
			r := rs.Start(s, sim.Options{Design: &design})
			<-r.Done()
			res := labResult(s, r)
			mu.Lock()
			defer mu.Unlock()
			results = append(results, res)
		})
	}
	wg.Wait()
	return sim.Score(d, results)
}

// reportOf runs scenario name under design d and returns its report.
func reportOf(t *testing.T, rs *Runs, name string, d sim.Switches) *sim.Report {
	t.Helper()
	r := rs.Start(scenario(t, name), sim.Options{Design: &d})
	<-r.Done()
	rep, err := r.Result()
	if err != nil {
		t.Fatalf("%s under %s: %v", name, d, err)
	}
	return rep
}

// The lab screen's challenges and the test's claims name the same
// challenges.
func TestEveryChallengeHasAClaimCheck(t *testing.T) {
	var ids []string
	for _, c := range quiz.Challenges() {
		ids = append(ids, c.ID)
		if challengeClaims[c.ID] == nil {
			t.Errorf("%s: no claim check", c.ID)
		}
	}
	if len(ids) != len(challengeClaims) {
		t.Errorf("claims for %d challenges, there are %d: %s", len(challengeClaims), len(ids), strings.Join(ids, ", "))
	}
}
