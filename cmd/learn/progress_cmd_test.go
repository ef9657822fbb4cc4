package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stateOf is what the state directory holds: each name with its mode and
// content, or "(none)" when there is no directory.
func stateOf(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "(none)"
	}
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, _ := e.Info()
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + " " + fi.Mode().String() + " " + string(data) + "\n")
	}
	return b.String()
}

// The user's report: `learn progress`, a command that only shows, moved a
// damaged progress file aside and rewrote an older one. Now the commands
// that show (progress, progress export) change nothing whatever they find,
// and say on stderr what they found.
func TestProgressCommandsThatShowChangeNothing(t *testing.T) {
	v0, err := os.ReadFile(filepath.Join("..", "..", "progress", "testdata", "progress-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	v1, err := os.ReadFile(filepath.Join("..", "..", "progress", "testdata", "progress-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, content string
		mode          fs.FileMode
		stderr        string // what stderr must hold ("" for nothing)
	}{
		{"no file", "", 0, ""},
		{"a damaged file", `{"version": 2, "read": `, 0o600, "is not a progress file ("},
		{"an older file", string(v0), 0o600, "older format (version 0)"},
		{"a file of version 1", string(v1), 0o600, "older format (version 1)"},
		{"a field of the wrong type", `{"version": 2, "read": {"idempotency": "2026-03-01T10:00:00Z"}, "drill_seconds": "ninety"}`, 0o600, `drill_seconds ("ninety")`},
		{"a read-only file", `{"version": 2, "read": {"idempotency": "2026-03-01T10:00:00Z"}}`, 0o400, "read-only"},
		// As the app says it (the same code decides): before, these
		// three printed "Progress: nothing saved yet." and no warning
		// that could be acted on.
		{"a newer file", `{"version": 99}`, 0o600, "was saved by a newer learn (version 99; this learn reads up to version 2)"},
		{"an array", `[]`, 0o600, "is not a progress file (a JSON array where an object belongs)"},
		{"a question out of range", `{"version": 2, "sets": {"checkpoint": {"next": 999, "answers": {"checkpoint/77": {"score": 1}}}}}`, 0o600,
			`sets.checkpoint.answers.checkpoint/77 ({"score":1}), sets.checkpoint.next (999)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := t.TempDir()
			t.Setenv("XDG_STATE_HOME", state)
			dir := filepath.Join(state, "learn")
			if c.mode != 0 {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "progress.json"), []byte(c.content), c.mode); err != nil {
					t.Fatal(err)
				}
			}
			before := stateOf(t, dir)
			for _, args := range [][]string{{"progress"}, {"progress", "export"}} {
				code, out, errs := runCLI(t, args...)
				if after := stateOf(t, dir); after != before {
					t.Errorf("learn %s changed the state directory:\n%s\nwas\n%s", strings.Join(args, " "), after, before)
				}
				if (c.stderr == "") != (errs == "") || !strings.Contains(errs, c.stderr) {
					t.Errorf("learn %s: stderr %q, want it to say %q", strings.Join(args, " "), errs, c.stderr)
				}
				wantCode := 0
				if (c.name == "a damaged file" || c.name == "an array") && len(args) == 2 {
					wantCode = 1 // nothing to export
				}
				if code != wantCode {
					t.Errorf("learn %s: exit %d, want %d", strings.Join(args, " "), code, wantCode)
				}
				// A file whose every part was refused is not "nothing saved
				// yet": that would contradict the notice.
				unusable := c.name == "a damaged file" || c.name == "an array" || c.name == "a newer file" || c.name == "a question out of range"
				if len(args) == 1 && unusable != strings.Contains(out, "Progress: nothing usable in the file (the notice above says why).") {
					t.Errorf("learn progress, %s: the summary's first line:\n%s", c.name, out)
				}
				if len(args) == 1 && c.name == "a file of version 1" && !strings.Contains(out, "Resume at: play › lost-answer › broken") {
					t.Errorf("learn progress, %s: the place to resume at is not the file's:\n%s", c.name, out)
				}
				if len(args) == 1 && strings.Contains(out, "nothing saved yet") != (c.name == "no file") {
					t.Errorf("learn progress, %s: \"nothing saved yet\" is said wrongly:\n%s", c.name, out)
				}
				if len(args) == 2 && code == 0 {
					var p map[string]any
					if err := json.Unmarshal([]byte(out), &p); err != nil {
						t.Errorf("learn progress export printed no JSON: %v\n%s", err, out)
					}
				}
			}
		})
	}
}

// The hostile trial: the file held "challenges": {"lab/last-seats": …} and
// the home screen said "1 of 5 challenges", but learn progress never named
// the design lab, and reset asked to forget "pages read, scores, the
// drill's schedule" only. Now the summary counts the challenges passed, as
// the home screen does, and the help names them (the reset question:
// internal/headless).
func TestProgressNamesTheLabChallenges(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := filepath.Join(state, "learn")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := `{"version": 2, "challenges": {"lab/last-seats": "2026-03-03T09:00:00Z"}, "updated_at": "2026-03-03T09:00:00Z"}`
	if err := os.WriteFile(filepath.Join(dir, "progress.json"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "progress")
	if code != 0 || errs != "" {
		t.Fatalf("learn progress: exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"Design lab challenges: 1 of 6 passed", "  [x] The last seats (passed "} {
		if !strings.Contains(out, want) {
			t.Errorf("learn progress lacks %q:\n%s", want, out)
		}
	}
	if _, help, _ := runCLI(t, "progress", "--help"); !strings.Contains(help, "the design lab's challenges") {
		t.Errorf("learn progress --help does not name the challenges:\n%s", help)
	}
}
