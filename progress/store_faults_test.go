package progress

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// writeProgress puts content in s.Path with mode, making its directory.
func writeProgress(t *testing.T, s *Store, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Path, mode); err != nil {
		t.Fatal(err)
	}
}

// dirState is what a directory holds: each name with its mode and content.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "(no directory)"
	}
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + " " + fi.Mode().String() + " " + string(data) + "\n")
	}
	return b.String()
}

// The user's report: one field of the wrong type (a hand edit, another
// tool) cost the whole file: every page read, every score. Now only what
// does not fit is set aside, at whatever depth, and the notice names it;
// the file as it was is kept beside it.
func TestStoreSetsAsideOnlyWhatDoesNotFit(t *testing.T) {
	const file = `{
  "version": 2,
  "read": {"idempotency": "2026-03-01T10:00:00Z", "interview": 7},
  "sets": {
    "checkpoint": {"answers": {"checkpoint/1": {"score": 1, "at": "2026-03-01T10:05:00Z"}}, "best": "high", "attempts": 2, "last_score": 0.5},
    "breakit": {"best": 1, "attempts": 1, "last_score": 1}
  },
  "drill": {"followup/redis-ttl": {"due": "2026-03-05T09:00:00Z", "interval_days": 3, "ease": 2.5, "reps": 2}},
  "drill_seconds": "ninety",
  "resume": {"page": "reader", "name": "idempotency"},
  "updated_at": "2026-03-01T10:06:00Z"
}
`
	s := newStore(t)
	writeProgress(t, s, file, 0o600)
	p, notices := mustLoad(t, s)

	if !p.IsRead("idempotency") || p.IsRead("interview") {
		t.Errorf("read = %v; want idempotency kept and interview (a number) set aside", p.Read)
	}
	if cp := p.Sets[setCheckpoint]; cp == nil || cp.Attempts != 2 || cp.LastScore != 0.5 || cp.Best != 0 || cp.Answers["checkpoint/1"].Score != 1 {
		t.Errorf("checkpoint = %+v; want all but best kept", cp)
	}
	if bi := p.Sets[setBreakIt]; bi == nil || bi.Best != 1 {
		t.Errorf("breakit = %+v", bi)
	}
	if r := p.Drill["followup/redis-ttl"]; r.Reps != 2 || r.Ease != 2.5 {
		t.Errorf("drill = %+v", p.Drill)
	}
	if p.DrillSeconds != 0 || p.Resume.Name != "idempotency" {
		t.Errorf("drill_seconds %d, resume %+v", p.DrillSeconds, p.Resume)
	}
	copyName := s.Path + ".damaged-20260314T150926Z"
	if len(notices) != 1 {
		t.Fatalf("notices %q, want one", notices)
	}
	for _, want := range []string{"read.interview", "sets.checkpoint.best", "drill_seconds", `"ninety"`, "kept beside it as " + filepath.Base(copyName)} {
		if !strings.Contains(notices[0], want) {
			t.Errorf("the notice does not name %s: %q", want, notices[0])
		}
	}
	if kept, err := os.ReadFile(copyName); err != nil || string(kept) != file {
		t.Errorf("the file as it was is not kept in %s: %v", copyName, err)
	}
	// What was kept is saved, so the next start says nothing.
	if again, notices := mustLoad(t, s); len(notices) != 0 || !again.IsRead("idempotency") {
		t.Errorf("the next Load: %q, %v", notices, again.Read)
	}
}

// The user's report: learn progress, which only shows, moved a damaged file
// aside and rewrote an older one. Peek, the read-only load, changes
// nothing whatever it finds: no directory, no lock file, no move, no
// upgrade, no copy; its notices say what it found.
func TestStorePeekChangesNothing(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "progress-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, content string
		mode          fs.FileMode
		read          bool   // idempotency is read in what Peek returns
		notice        string // in the notice ("" for none)
	}{
		{"no file", "", 0, false, ""},
		{"a current file", `{"version": 2, "read": {"idempotency": "2026-03-01T10:00:00Z"}}`, 0o600, true, ""},
		{"a damaged file", `{"version": 2, "read": `, 0o600, false, "is not a progress file ("},
		{"an older file", string(fixture), 0o600, true, "older format"},
		{"a newer file", `{"version": 99}`, 0o600, false, "newer learn"},
		{"a field of the wrong type", `{"version": 2, "read": {"idempotency": "2026-03-01T10:00:00Z"}, "drill_seconds": "x"}`, 0o600, true, "drill_seconds"},
		{"a read-only file", `{"version": 2, "read": {"idempotency": "2026-03-01T10:00:00Z"}}`, 0o400, true, "read-only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			if c.mode != 0 {
				writeProgress(t, s, c.content, c.mode)
			}
			before := dirState(t, filepath.Dir(s.Path))
			p, notices, err := s.Peek()
			if err != nil {
				t.Fatal(err)
			}
			if after := dirState(t, filepath.Dir(s.Path)); after != before {
				t.Errorf("Peek changed the state directory:\n%s\nwas\n%s", after, before)
			}
			if p.IsRead("idempotency") != c.read {
				t.Errorf("read = %v", p.Read)
			}
			got := strings.Join(notices, "\n")
			if (c.notice == "") != (got == "") || !strings.Contains(got, c.notice) {
				t.Errorf("notices %q, want one saying %q", notices, c.notice)
			}
			var out bytes.Buffer
			err = s.Export(&out)
			if after := dirState(t, filepath.Dir(s.Path)); after != before {
				t.Errorf("Export changed the state directory:\n%s\nwas\n%s", after, before)
			}
			if (err != nil) != (c.name == "a damaged file") || c.read && !strings.Contains(out.String(), "idempotency") {
				t.Errorf("Export: %v\n%s", err, out.String())
			}
		})
	}
}

// The user's report: a progress file made read-only (chmod 0400) was
// replaced by a new 0600 file on the next save. Now nothing replaces,
// moves or rewrites it: Update refuses with ErrReadOnly and says what to
// do, Load says so once and goes on with what the file holds, whatever
// else is wrong with it.
func TestStoreLeavesAReadOnlyFileAlone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	fixture, err := os.ReadFile(filepath.Join("testdata", "progress-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, content string }{
		{"a current file", `{"version": 2, "read": {"idempotency": "2026-03-01T10:00:00Z"}}`},
		{"an older file", string(fixture)},
		{"a field of the wrong type", `{"version": 2, "read": {"idempotency": "2026-03-01T10:00:00Z"}, "drill_seconds": "x"}`},
		{"a damaged file", `{"version": 2, "read": `},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			writeProgress(t, s, c.content, 0o400)
			var notified []string
			s.Notify = func(n string) { notified = append(notified, n) }
			before := dirState(t, filepath.Dir(s.Path))

			_, notices := mustLoad(t, s)
			if !slices.ContainsFunc(notices, func(n string) bool { return strings.Contains(n, "read-only") }) {
				t.Errorf("Load's notices %q do not say the file is read-only", notices)
			}
			_, err := s.Update(func(p *Progress) error { p.MarkRead("retries", fixedNow); return nil })
			if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "chmod u+w "+s.Path) {
				t.Errorf("Update of a read-only file: %v; want ErrReadOnly saying what to do", err)
			}
			if after := dirState(t, filepath.Dir(s.Path)); strings.ReplaceAll(after, FileName+".lock -rw------- \n", "") != before {
				t.Errorf("the state directory changed:\n%s\nwas\n%s", after, before)
			}

			// Made writable again, it saves as before.
			if err := os.Chmod(s.Path, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Update(func(p *Progress) error { p.MarkRead("retries", fixedNow); return nil }); err != nil {
				t.Errorf("Update once writable: %v", err)
			}
		})
	}
}
