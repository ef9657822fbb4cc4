package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
)

// learn lab prints the scorecard of the design it is given: the design
// switch by switch, every scenario with its verdict, and the summary.
func TestLabJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "lab", "--set", "lookup=after-seat-check", "--set", "constraint=none", "--json", "--database-url", testDB.ConnString())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var card sim.Scorecard
	if err := json.Unmarshal([]byte(out), &card); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var raw struct {
		Design map[string]string `json:"design"`
	}
	_ = json.Unmarshal([]byte(out), &raw)
	if raw.Design["lookup"] != "after-seat-check" || raw.Design["constraint"] != "none" || raw.Design["retry"] != "network-5xx" || len(raw.Design) != 13 || raw.Design["isolation"] != "read-committed" {
		t.Errorf("design %v", raw.Design)
	}
	failed := map[string]bool{}
	for _, r := range card.Scenarios {
		if !r.Pass {
			failed[r.Scenario] = true
		}
	}
	for _, name := range []string{"last-seats", "replay-after-sellout", "key-reuse-two-events"} {
		if !failed[name] {
			t.Errorf("%s passes under this design", name)
		}
	}
	if len(card.Scenarios) != len(sim.Scenarios()) || card.Summary != "safe against 16 of 19 scenarios" {
		t.Errorf("%d scenarios, %q", len(card.Scenarios), card.Summary)
	}
}

// Unknown switches and values are usage errors that list what is valid.
func TestLabBadSwitches(t *testing.T) {
	for _, tc := range []struct {
		set, want string
	}{
		{"loookup=none", "the switches are lookup, lock, constraint, compare, store, expiry, isolation, on-40001, in-flight, client-key, key-kept, retry, backoff"},
		{"lookup=sideways", "use one of after-lock, before-lock, after-seat-check, none"},
		{"lookup", "is not name=value"},
		{"lookup=none --set lookup=after-lock", "switch lookup is set twice (lookup=none, then lookup=after-lock): set each switch once"},
	} {
		args := []string{"lab"}
		for _, set := range strings.Split(tc.set, " --set ") {
			args = append(args, "--set", set)
		}
		code, _, errOut := runCLI(t, args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("--set %s: exit %d, %q; want 2 and %q", tc.set, code, errOut, tc.want)
		}
	}
}
