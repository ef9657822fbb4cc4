package sim

import (
	"regexp"
	"strconv"
	"testing"
)

// The invariants' details say their counts in words, singular for one and
// plural otherwise: "1 intent booked more than once", "0 intents …",
// "2 (user, key) pairs …".
func TestInvariantDetailsSayTheCountsInWords(t *testing.T) {
	tests := []struct {
		scenario string
		variant  Variant
		want     map[string]string // invariant name → detail
	}{
		{"lost-answer", Correct, map[string]string{
			InvOnePerKey:           "0 (user, key) pairs with more than one booking",
			InvOneBookingPerIntent: "0 intents booked more than once",
			InvAnswerMatches:       "0 answers carry a booking of another event or quantity",
			InvKeysPerUser:         "0 intents got 409, or a 5xx on every try, for a key only another user had used",
		}},
		{"lost-answer", Broken, map[string]string{
			InvOnePerKey:           "1 (user, key) pair with more than one booking",
			InvOneBookingPerIntent: "1 intent booked more than once",
			InvIntentGetsItsBook:   "1 intent booked but got another answer",
			InvRefusalFinal:        "0 intents sent again after a 4xx",
		}},
		{"redis-ttl", Broken, map[string]string{
			InvOnePerKey:           "2 (user, key) pairs with more than one booking",
			InvOneBookingPerIntent: "2 intents booked more than once",
			InvIntentGetsItsBook:   "2 intents booked but got another answer",
		}},
		{"different-quantity", Broken, map[string]string{
			InvAnswerMatches: "1 answer carries a booking of another event or quantity",
		}},
		{"two-users-same-key", Broken, map[string]string{
			InvAnswerIsOwn: "1 answer: ben got ada's booking b1",
			InvKeysPerUser: "0 intents got 409, or a 5xx on every try, for a key only another user had used",
		}},
		{"two-users-same-key", "constraint=key", map[string]string{
			InvAnswerIsOwn: "0 answers carry another user's booking",
			InvKeysPerUser: "1 intent got 409, or a 5xx on every try, for a key only another user had used",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+string(tt.variant), func(t *testing.T) {
			got := map[string]string{}
			opts := Options{Variant: tt.variant}
			if d, err := ParseSwitches([]string{string(tt.variant)}); err == nil {
				opts = Options{Design: &d} // a design of the lab, named by its switch
			}
			for _, inv := range runScenario(t, tt.scenario, opts).Invariants {
				got[inv.Name] = inv.Detail
			}
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("%s: detail %q, want %q", name, got[name], want)
				}
			}
		})
	}
}

// The invariants count in one unit, the intent: the copies of one intent
// are one intent, and a detail that stands for several copies says so. The
// numbers of the details agree with each other and with the tries.
func TestInvariantDetailsCountIntentsConsistently(t *testing.T) {
	details := func(rep *Report) map[string]string {
		got := map[string]string{}
		for _, inv := range rep.Invariants {
			got[inv.Name] = inv.Detail
		}
		return got
	}
	t.Run("broken concurrent copies", func(t *testing.T) {
		rep := runScenario(t, "concurrent-copies", Options{Variant: Broken, Copies: 5})
		want := map[string]string{
			InvOneBookingPerTry:    "1 intent got more than one booking",
			InvOneBookingPerIntent: "1 intent booked more than once",
			InvIntentGetsItsBook:   "1 intent booked but got another answer (4 of its copies)",
		}
		got := details(rep)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: detail %q, want %q", name, got[name], w)
			}
		}
		for _, inv := range rep.Invariants {
			if inv.Name == InvOneBookingPerTry && inv.Pass {
				t.Error("5 copies of one intent got 5 booking ids, and every try of the intent is said to have got the same one")
			}
		}
	})
	type tc struct {
		name string
		opts Options
	}
	var cases []tc
	for _, s := range Scenarios() {
		cases = append(cases, tc{s.Name, Options{}})
		if s.HasBroken() {
			cases = append(cases, tc{s.Name, Options{Variant: Broken}})
		}
	}
	lead := regexp.MustCompile(`^(\d+) intents? `)
	copies := regexp.MustCompile(`\((\d+) (of its copies|copies in all)\)$`)
	for _, c := range cases {
		t.Run(c.name+"/"+string(c.opts.Variant), func(t *testing.T) {
			rep := runScenario(t, c.name, c.opts)
			ids := map[int]map[string]bool{}
			sent := map[int]int{} // intent → copies sent
			for _, a := range rep.Attempts {
				sent[a.Intent]++
				for _, try := range a.Tries {
					if try.BookingID != "" {
						if ids[a.Intent] == nil {
							ids[a.Intent] = map[string]bool{}
						}
						ids[a.Intent][try.BookingID] = true
					}
				}
			}
			split := 0
			for _, got := range ids {
				if len(got) > 1 {
					split++
				}
			}
			for _, inv := range rep.Invariants {
				m := lead.FindStringSubmatch(inv.Detail)
				if m == nil {
					continue // counted in another unit: answers, pairs, seats
				}
				n, _ := strconv.Atoi(m[1])
				if n > len(sent) || inv.Pass != (n == 0) {
					t.Errorf("%s: %q counts %d of %d intents (pass %v)", inv.Name, inv.Detail, n, len(sent), inv.Pass)
				}
				if m := copies.FindStringSubmatch(inv.Detail); m != nil {
					k, _ := strconv.Atoi(m[1])
					if k <= n || k > len(rep.Attempts) || (n == 1) != (m[2] == "of its copies") {
						t.Errorf("%s: %q: %d copies for %d intents, of %d copies sent", inv.Name, inv.Detail, k, n, len(rep.Attempts))
					}
				}
				if inv.Name == InvOneBookingPerTry && n != split {
					t.Errorf("%s: %q, but %d intents got more than one booking id over their copies and tries", inv.Name, inv.Detail, split)
				}
			}
		})
	}
}
