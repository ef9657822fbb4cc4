package sim

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// documentedFields are the top-level fields README.md's table of `learn
// demo NAME --json` names (its first column), read from the README so the
// two cannot drift apart.
func documentedFields(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "`learn demo NAME --json` prints one object:")
	if !ok {
		t.Fatal("README.md has no table of learn demo --json")
	}
	table, _, _ = strings.Cut(strings.TrimSpace(table), "\n\n")
	var names []string
	cell := regexp.MustCompile(`^\| ([^|]+) \|`)
	field := regexp.MustCompile("`([a-z_]+)`")
	for _, line := range strings.Split(table, "\n") {
		if m := cell.FindStringSubmatch(line); m != nil {
			for _, f := range field.FindAllStringSubmatch(m[1], -1) {
				names = append(names, f[1])
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("read %d fields from README's table: %v", len(names), names)
	}
	return names
}

// The JSON report of a real run names every field the README lists,
// whatever the run: a verdict that held has "failed": [] (a script reads
// d["verdict"]["failed"]), and a try without a booking has "booking_id":
// null and "replayed": false, as an answer does. The reports are made by
// the runs themselves, so a producer that leaves a field out fails here.
func TestReportJSONHasEveryDocumentedField(t *testing.T) {
	fields := documentedFields(t)
	for _, tc := range []struct {
		scenario string
		variant  Variant
	}{
		{"lost-answer", Correct},    // held, with a lost answer and a replay
		{"no-retry-on-4xx", Broken}, // failed, tries without a booking
	} {
		rep := runScenario(t, tc.scenario, Options{Variant: tc.variant})
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		for _, f := range fields {
			if _, ok := got[f]; !ok {
				t.Errorf("%s (%s): no %q in %s", tc.scenario, tc.variant, f, b)
			}
		}
		var v struct {
			Verdict struct {
				Held   bool              `json:"held"`
				Failed []json.RawMessage `json:"failed"`
			} `json:"verdict"`
			Attempts []struct {
				Tries []map[string]json.RawMessage `json:"tries"`
			} `json:"attempts"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if v.Verdict.Held && !strings.Contains(string(got["verdict"]), `"failed":[]`) {
			t.Errorf("%s: a verdict that held: %s; want \"failed\":[]", tc.scenario, got["verdict"])
		}
		tries := 0
		for _, a := range v.Attempts {
			for _, try := range a.Tries {
				tries++
				for _, f := range []string{"try", "instance", "booking_id", "replayed"} {
					if _, ok := try[f]; !ok {
						t.Errorf("%s: a try without %q: %v", tc.scenario, f, try)
					}
				}
				if _, ok := try["status"]; !ok {
					if _, ok := try["error"]; !ok {
						t.Errorf("%s: a try with neither status nor error: %v", tc.scenario, try)
					}
				}
			}
		}
		if tries == 0 {
			t.Errorf("%s: no tries in %s", tc.scenario, b)
		}
	}
}
