package sim

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/engine"
)

// The whole-space sweep: every design of the lab (or a seeded sample of
// them) against every scenario, each verdict held against an oracle
// written here, apart from Judge, from the report's raw facts.
//
//	go test ./sim -run TestSweep -timeout 12h -args -sweep.all   # every design
//	LEARN_SWEEP_SEED=42 go test ./sim -run TestSweep -v            # a sample, again
var (
	sweepAll     = flag.Bool("sweep.all", false, "sweep every design of the lab, not a sample")
	sweepDesigns = flag.Int("sweep.designs", 50, "designs in the sample when -sweep.all is not set")
)

// sweepSample is the designs the sweep runs: every distinct design (by
// what it runs, Switches.Effective), or a sample of n of them drawn with
// seed; the lesson's design is always among them.
func sweepSample(all bool, n int, seed uint64) []Switches {
	seen := map[Switches]bool{}
	var designs []Switches
	for _, d := range AllDesigns() {
		if e := d.Effective(); !seen[e] {
			seen[e] = true
			designs = append(designs, e)
		}
	}
	if all || n >= len(designs) {
		return designs
	}
	rest := designs[1:] // designs[0] is the lesson's
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	return append([]Switches{designs[0]}, rest[:n-1]...)
}

// sweepSeed is the sample's seed: LEARN_SWEEP_SEED, or the clock's.
func sweepSeed(t *testing.T) uint64 {
	if s := os.Getenv("LEARN_SWEEP_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LEARN_SWEEP_SEED=%q is not a whole number", s)
		}
		return seed
	}
	return uint64(time.Now().UnixNano())
}

func TestSweep(t *testing.T) {
	t.Parallel() // schemas of its own, beside the property tests'
	seed := sweepSeed(t)
	designs := sweepSample(*sweepAll, *sweepDesigns, seed)
	t.Logf("sweep: %d designs x %d scenarios, seed %d (again: LEARN_SWEEP_SEED=%d go test ./sim -run TestSweep)",
		len(designs), len(Scenarios()), seed, seed)
	if !*sweepAll && len(designs) < 50 {
		t.Fatalf("the sample has %d designs, at least 50 are due", len(designs))
	}
	for _, d := range designs {
		var wg sync.WaitGroup
		for _, s := range Scenarios() {
			wg.Go(func() {
				rep, err := sweepRun(t, s, d)
				if err != nil {
					t.Errorf("%s under %s could not run: %v", s.Name, d, err)
					return
				}
				for _, fault := range judgeAgainstOracle(rep) {
					t.Errorf("%s under %s: %s", s.Name, d, fault)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.Fatalf("stopped at design %s (seed %d)", d, seed)
		}
	}
}

// sweepRun runs scenario s under design d on a fresh schema.
func sweepRun(t *testing.T, s *Scenario, d Switches) (*Report, error) {
	run, err := s.Prepare(t.Context(), testDatabase(), Options{Design: &d, Copies: 4})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := run.Close(); err != nil {
			t.Errorf("close run: %v", err)
		}
	}()
	return run.Execute(t.Context())
}

// judgeAgainstOracle is what is wrong with the verdict of rep: a ✓ where
// the oracle finds a user harmed, a ✗ where it finds none, a ✓ sentence
// that names a guard that did not act, or a ✗ without its consequence.
func judgeAgainstOracle(rep *Report) []string {
	var faults []string
	harms := oracleHarms(rep)
	v := rep.Verdict
	switch {
	case v.Held && len(harms) > 0:
		faults = append(faults, fmt.Sprintf("✓ %q, but the oracle finds: %s", v.Says, strings.Join(harms, "; ")))
	case !v.Held && len(harms) == 0:
		faults = append(faults, fmt.Sprintf("✗ %q (%s), but the oracle finds nobody harmed", v.Says, failedNames(v)))
	case !v.Held && (v.Says == "" || len(v.Failed) == 0):
		faults = append(faults, fmt.Sprintf("✗ without its consequence or invariants: %+v", v))
	}
	if v.Held {
		faults = append(faults, guardWordsFault(v.Says, rep.Guards)...)
		faults = append(faults, numbersFault(v.Says, rep)...)
	}
	return faults
}

func failedNames(v *Verdict) string {
	var names []string
	for _, inv := range v.Failed {
		names = append(names, inv.Name)
	}
	return strings.Join(names, "; ")
}

// oracleHarms lists, from rep's raw facts alone (the tries of every
// intent, the rows, the seats), what a user of the run suffered. It is
// written apart from Judge on purpose: the two must agree on every run.
func oracleHarms(rep *Report) []string {
	var harms []string
	rows := map[string]engine.BookingRow{}
	perPair := map[string]int{}
	sum := 0
	for _, b := range rep.Bookings {
		rows[b.ID] = b
		if !b.KeyExpired {
			perPair[b.UserID+"/"+b.Key]++
		}
		sum += b.Quantity
	}
	if sum != rep.SeatsTaken {
		harms = append(harms, fmt.Sprintf("%d seats taken for %d booked", rep.SeatsTaken, sum))
	}
	for pair, n := range perPair {
		if n > 1 {
			harms = append(harms, fmt.Sprintf("key %s holds %d bookings", pair, n))
		}
	}
	// An intent is all the copies sent under one number, with every key
	// its tries carried.
	type intent struct {
		user     string
		event    int64
		quantity int
		keys     map[string]bool
		copies   []IntentReport
	}
	intents := map[int]*intent{}
	for _, a := range rep.Attempts {
		in := intents[a.Intent]
		if in == nil {
			in = &intent{user: a.User, event: a.EventID, quantity: a.Quantity, keys: map[string]bool{}}
			intents[a.Intent] = in
		}
		in.copies = append(in.copies, a)
		in.keys[a.Key] = true
		for _, t := range a.Tries {
			if t.Key != "" {
				in.keys[t.Key] = true
			}
		}
	}
	for n, in := range intents {
		var own []string // the rows this intent asked for, oldest first
		for _, b := range rep.Bookings {
			if b.UserID == in.user && in.keys[b.Key] && b.EventID == in.event && b.Quantity == in.quantity {
				own = append(own, b.ID)
			}
		}
		if len(own) > 1 {
			harms = append(harms, fmt.Sprintf("intent %d (%s) booked %d times", n, in.user, len(own)))
		}
		ids := map[string]bool{}
		for _, c := range in.copies {
			for i, t := range c.Tries {
				if t.BookingID != "" {
					ids[t.BookingID] = true
					b, ok := rows[t.BookingID]
					switch {
					case !ok:
						harms = append(harms, fmt.Sprintf("intent %d told of %s, which is not stored", n, t.BookingID))
					case b.UserID != in.user:
						harms = append(harms, fmt.Sprintf("%s shown %s's booking %s", in.user, b.UserID, b.ID))
					case b.EventID != in.event || b.Quantity != in.quantity:
						harms = append(harms, fmt.Sprintf("intent %d given %s, event %d × %d, for event %d × %d", n, b.ID, b.EventID, b.Quantity, in.event, in.quantity))
					}
				}
				// A 409 request_in_progress asks to be tried again, as a
				// 5xx does: it is no final answer, and sending it again is
				// what a client should do.
				again := t.Status == 409 && t.Code == engine.CodeInProgress
				final := t.Status >= 200 && t.Status < 500 && !again
				if len(own) > 0 && final && t.BookingID != own[0] {
					harms = append(harms, fmt.Sprintf("intent %d booked %s but try %d got %d %s", n, own[0], t.Try, t.Status, t.BookingID))
				}
				// retries-exhausted cuts its instance off the database on
				// purpose: its 500s are the world's, not the design's.
				if t.Status == 500 && t.Code == "internal" && rep.Scenario != "retries-exhausted" {
					harms = append(harms, fmt.Sprintf("intent %d try %d answered 500 by the API itself", n, t.Try))
				}
				if t.Status >= 400 && t.Status < 500 && !again && i < len(c.Tries)-1 {
					harms = append(harms, fmt.Sprintf("intent %d sent again after a %d", n, t.Status))
				}
				if t.Code == engine.CodeKeyReused {
					mine := false
					for m, other := range intents {
						if m != n && other.user == in.user && other.keys[c.Key] {
							mine = true
						}
					}
					if !mine && len(in.copies) == 1 {
						harms = append(harms, fmt.Sprintf("%s refused for a key only another user sent", in.user))
					}
				}
			}
			if k := len(c.Tries); k > 0 && k < 3 && (c.Tries[k-1].Error != "" || c.Tries[k-1].Status >= 500 || c.Tries[k-1].Code == engine.CodeInProgress) {
				harms = append(harms, fmt.Sprintf("intent %d given up after %d tries without an answer, on a 5xx or on a 409 request_in_progress", n, k))
			}
			// A retry sent before the lesson's backoff was up, on the
			// client's own clock (or the answer's Retry-After, longer).
			for i := 1; i < len(c.Tries) && i <= len(client.DefaultBackoff); i++ {
				if gap := c.Tries[i].SentAt - c.Tries[i-1].SentAt; gap < client.DefaultBackoff[i-1] {
					harms = append(harms, fmt.Sprintf("intent %d try %d sent %s after the one before, under the %s of the backoff", n, i+1, gap, client.DefaultBackoff[i-1]))
				}
			}
			if k := len(c.Tries); k > 3 {
				harms = append(harms, fmt.Sprintf("intent %d sent %d times", n, k))
			}
			// A copy that ended on a 5xx while another copy was answered
			// with the intent's booking: the API could have replayed it.
			if k := len(c.Tries); k > 0 && c.Tries[k-1].Status >= 500 && len(own) > 0 {
				for _, other := range in.copies {
					if m := len(other.Tries); m > 0 && other.Tries[m-1].BookingID == own[0] {
						harms = append(harms, fmt.Sprintf("intent %d: a copy ended on %d though another got %s", n, c.Tries[k-1].Status, own[0]))
						break
					}
				}
			}
		}
		if len(ids) > 1 {
			harms = append(harms, fmt.Sprintf("intent %d answered with %d different bookings", n, len(ids)))
		}
	}
	slices.Sort(harms)
	return harms
}

// guardWordsFault says where a ✓ sentence names a guard that did not act
// in its run.
func guardWordsFault(says string, g Guards) []string {
	var faults []string
	for _, c := range []struct {
		words string
		acted bool
	}{
		{"23505", g.Violations > 0},
		{"constraint", g.Violations > 0},
		{"lookup", g.Lookups > 0},
		{"memory", g.StoreHits > g.RedisHits},
		{"Redis", g.RedisHits > 0},
		{"the engine ran", g.Reruns > 0},
	} {
		if strings.Contains(says, c.words) && !c.acted {
			faults = append(faults, fmt.Sprintf("✓ %q names %q, which did not act (%+v)", says, c.words, g))
		}
	}
	return faults
}

var (
	saysBookings = regexp.MustCompile(`\b(one|no|\d+) bookings?\b`)
	saysSeats    = regexp.MustCompile(`\b(\d+) seats? (taken|left)?`)
)

// numbersFault says where a ✓ sentence's count of bookings or seats is
// not the run's.
func numbersFault(says string, rep *Report) []string {
	var faults []string
	if m := saysBookings.FindStringSubmatch(says); m != nil && !strings.Contains(says, "stored by") {
		n := map[string]int{"one": 1, "no": 0}[m[1]]
		if v, err := strconv.Atoi(m[1]); err == nil {
			n = v
		}
		if n != rep.BookingRows {
			faults = append(faults, fmt.Sprintf("✓ %q says %s, the table has %d rows", says, m[0], rep.BookingRows))
		}
	}
	if m := saysSeats.FindStringSubmatch(says); m != nil {
		n, _ := strconv.Atoi(m[1])
		want := rep.SeatsTaken
		if m[2] == "left" {
			want = rep.Facts.SeatsLeft
		}
		if n != want {
			faults = append(faults, fmt.Sprintf("✓ %q says %s, the run has %d", says, m[0], want))
		}
	}
	return faults
}

// The oracle can fail: on runs whose harm it must see, it sees it (a
// mutation check of the oracle itself).
func TestOracleSeesEachBrokenVariantsHarm(t *testing.T) {
	for _, s := range Scenarios() {
		if !s.HasBroken() {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			rep := runScenario(t, s.Name, Options{Variant: Broken})
			if harms := oracleHarms(rep); len(harms) == 0 {
				t.Errorf("the broken variant harms nobody by the oracle; verdict %q", rep.Verdict.Says)
			}
			if harms := oracleHarms(runScenario(t, s.Name, Options{})); len(harms) > 0 {
				t.Errorf("the correct variant harms: %v", harms)
			}
		})
	}
}
