package sim

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A design under which one user is answered with another user's booking is
// never scored safe: the verdict names the leak, whatever else held.
func TestALeakIsNeverScoredSafe(t *testing.T) {
	for _, set := range [][]string{
		{"constraint=key", "compare=none"},
		{"constraint=key", "compare=event-quantity"},
	} {
		t.Run(strings.Join(set, " "), func(t *testing.T) {
			d, err := ParseSwitches(set)
			if err != nil {
				t.Fatal(err)
			}
			rep := runScenario(t, "two-users-same-key", Options{Design: &d})
			v := rep.Verdict
			if v.Held || !slices.ContainsFunc(v.Failed, func(inv Invariant) bool { return inv.Name == InvAnswerIsOwn }) {
				t.Fatalf("verdict %+v: want the leak (%s) failed", v, InvAnswerIsOwn)
			}
			if !strings.Contains(v.Says, "another user's booking") || !strings.Contains(v.Says, "ben got ada's booking b1") {
				t.Errorf("says %q: want who got whose booking", v.Says)
			}
		})
	}
}

// A key store outside the row keeps the design's own comparison and the
// row's constraint: Redis in front with the row's UNIQUE behind it can be
// composed, and the constraint rescues what Redis misses; without the
// constraint the crash and the expired key book again; and a changed
// quantity is refused by the comparison, not blamed on the store.
func TestKeyStoreKeepsItsOwnConstraintAndComparison(t *testing.T) {
	run := func(t *testing.T, scenario string, set ...string) *Report {
		t.Helper()
		d, err := ParseSwitches(set)
		if err != nil {
			t.Fatal(err)
		}
		return runScenario(t, scenario, Options{Design: &d})
	}
	t.Run("redis in front, unique behind", func(t *testing.T) {
		rep := run(t, "redis-ttl", "store=redis-ttl")
		if !rep.Verdict.Held || rep.BookingRows != 2 || rep.Guards.Violations != 2 || rep.Guards.RedisHits != 0 {
			t.Errorf("held %v, %d rows, guards %+v; want both retries rescued by the constraint: 2 rows, 2 violations, no Redis hit", rep.Verdict.Held, rep.BookingRows, rep.Guards)
		}
		if !strings.Contains(rep.Verdict.Says, "unique constraint") {
			t.Errorf("says %q: want the guard that acted named", rep.Verdict.Says)
		}
	})
	t.Run("redis alone", func(t *testing.T) {
		rep := run(t, "redis-ttl", "store=redis-ttl", "constraint=none")
		if rep.Verdict.Held || rep.BookingRows != 4 {
			t.Errorf("held %v, %d rows; want 4 rows for 2 clicks", rep.Verdict.Held, rep.BookingRows)
		}
	})
	t.Run("redis compares", func(t *testing.T) {
		rep := run(t, "different-quantity", "store=redis-ttl")
		if !rep.Verdict.Held || rep.Guards.RedisHits != 1 {
			t.Errorf("verdict %+v, guards %+v; want the changed quantity refused after Redis found the key", rep.Verdict, rep.Guards)
		}
		rep = run(t, "different-quantity", "store=redis-ttl", "compare=none")
		if rep.Verdict.Held {
			t.Errorf("without the comparison: %+v", rep.Verdict)
		}
	})
	t.Run("memory on another instance", func(t *testing.T) {
		rep := run(t, "other-instance", "store=memory")
		if !rep.Verdict.Held || rep.Guards.Violations != 1 || rep.BookingRows != 1 {
			t.Errorf("held %v, %d rows, guards %+v; want api-2's INSERT stopped by the constraint", rep.Verdict.Held, rep.BookingRows, rep.Guards)
		}
	})
}

// A switch that acts on nothing is said so in the report, with why, and
// two designs that differ only in it run the same code.
func TestSwitchesThatDoNotApplyAreSaidSo(t *testing.T) {
	tests := []struct {
		set  []string
		want []string // the switches not applying
	}{
		{nil, nil},
		{[]string{"store=redis-ttl"}, []string{"lookup"}},
		{[]string{"store=memory", "lookup=before-lock"}, []string{"lookup"}},
		{[]string{"lookup=none", "constraint=none"}, []string{"compare"}},
		{[]string{"lookup=none", "constraint=none", "store=memory"}, []string{"lookup"}},
		{[]string{"retry=none", "client-key=per-retry"}, []string{"client-key"}},
	}
	for _, tt := range tests {
		d, err := ParseSwitches(tt.set)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, na := range d.NotApplying() {
			got = append(got, na.Switch)
			if na.Why == "" {
				t.Errorf("%v: %s does not apply, without why", tt.set, na.Switch)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%v: not applying %v, want %v", tt.set, got, tt.want)
		}
		for _, name := range tt.want {
			if e := d.Effective(); e.Get(name) != (Switches{}).Get(name) {
				t.Errorf("%v: Effective keeps %s=%s", tt.set, name, e.Get(name))
			}
		}
	}
	d, _ := ParseSwitches([]string{"store=redis-ttl", "lookup=before-lock"})
	b, err := json.Marshal(runScenario(t, "lost-answer", Options{Design: &d}))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Design      map[string]string `json:"design"`
		NotApplying []NotApplying     `json:"not_applying"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Design["lookup"] != "before-lock" || len(rep.NotApplying) != 1 || rep.NotApplying[0].Switch != "lookup" || !strings.Contains(rep.NotApplying[0].Why, "store=redis-ttl") {
		t.Errorf("--json design %v, not_applying %+v: want lookup shown as set and as not applying because of the store", rep.Design, rep.NotApplying)
	}
}
