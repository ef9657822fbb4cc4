package progress

import (
	"strings"
	"testing"
)

// decode sets aside what does not fit, at any depth and in both versions,
// and keeps the rest; what is not an object, or has an unusable version,
// or keys version 0 never had, is still damaged as a whole.
func TestDecodeSetsAsideOnlyWhatDoesNotFit(t *testing.T) {
	tests := []struct {
		name, file string
		lost       string // the values set aside, as the notice lists them
		check      func(p *Progress) bool
	}{
		{"nothing wrong", `{"version": 2, "read": {"a": "2026-01-01T00:00:00Z"}}`, "",
			func(p *Progress) bool { return p.IsRead("a") }},
		{"a top-level field", `{"version": 2, "read": 5, "drill_seconds": 90}`, "read (5)",
			func(p *Progress) bool { return p.DrillSeconds == 90 && len(p.Read) == 0 }},
		{"a map entry", `{"version": 2, "read": {"a": "2026-01-01T00:00:00Z", "b": true}}`, "read.b (true)",
			func(p *Progress) bool { return p.IsRead("a") && !p.IsRead("b") }},
		{"a field of an entry", `{"version": 2, "sets": {"checkpoint": {"best": [1], "attempts": 3}}}`, "sets.checkpoint.best ([1])",
			func(p *Progress) bool { return p.Sets["checkpoint"].Attempts == 3 }},
		{"a whole entry", `{"version": 2, "sets": {"checkpoint": "done", "breakit": {"attempts": 1}}}`, `sets.checkpoint ("done")`,
			func(p *Progress) bool { _, ok := p.Sets["checkpoint"]; return !ok && p.Sets["breakit"].Attempts == 1 }},
		{"a number out of range", `{"version": 2, "drill_seconds": 1e40}`, "drill_seconds (1e40)",
			func(p *Progress) bool { return p.DrillSeconds == 0 }},
		{"a long value is cut", `{"version": 2, "resume": {"page": "reader", "step": "` + strings.Repeat("x", 60) + `"}}`, `resume.step ("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…)`,
			func(p *Progress) bool { return p.Resume.Page == PageReader }},
		{"names matched ignoring case, as json does", `{"version": 2, "Drill_Seconds": 45}`, "",
			func(p *Progress) bool { return p.DrillSeconds == 45 }},
		{"null leaves the zero value", `{"version": 2, "read": null, "resume": null}`, "",
			func(p *Progress) bool { return p.Read != nil && p.Resume.IsZero() }},
		{"version 0", `{"read": ["a", 7], "scores": {"checkpoint": {"best": "x", "attempts": 2}}}`, `read[1] (7), scores.checkpoint.best ("x")`,
			func(p *Progress) bool { return p.IsRead("a") && p.Sets["checkpoint"].Attempts == 2 }},
	}
	for _, tt := range tests {
		p, _, lost, err := decode([]byte(tt.file), testKnown())
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := asideList(lost); got != tt.lost || !tt.check(p) {
			t.Errorf("%s: set aside %q, want %q; kept %+v", tt.name, got, tt.lost, p)
		}
	}
	for _, file := range []string{`[1]`, `"x"`, `{"version": "one"}`, `{"version": 1.5}`, `{"hello": "world"}`, `{"read": [], "extra": 1}`} {
		if _, _, _, err := decode([]byte(file), testKnown()); err == nil || !strings.Contains(err.Error(), "not a progress file (") {
			t.Errorf("decode(%s) = %v, want it damaged", file, err)
		}
	}
}
