package workshop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/quiz"
)

// The room's summary is on disk from the start, whole, and follows the
// room as it changes (an attendee who joins, their answer, their
// progress), not ended, while a marker says where it is; Close writes it
// a last time, ended, and the marker goes. Before, it was written only
// at the end: a workshop that crashed or was killed lost it all.
func TestSummaryIsKeptOnDiskAsItChanges(t *testing.T) {
	dir, markers := t.TempDir(), t.TempDir()
	w := startWorkshop(t, Config{SummaryDir: dir, markers: markers})
	path, err := w.SummaryFile()
	if err != nil || filepath.Dir(path) != dir {
		t.Fatalf("SummaryFile() = %q, %v; want a file in %s", path, err, dir)
	}
	onDisk := func() room.Summary {
		s, err := readSummary(path)
		if err != nil {
			t.Fatalf("the kept summary: %v", err) // never a part: written whole or not at all
		}
		return s
	}
	if s := onDisk(); !s.Ended.IsZero() || s.Saved.IsZero() || len(s.Attendees) != 0 {
		t.Errorf("the summary at the start: %+v", s)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the summary's file: %v, %v; want 0600", fi, err)
	}
	kept, err := KeptSummaries(markers)
	if err != nil || len(kept) != 1 || !kept[0].Running || kept[0].Path != path || kept[0].PID != os.Getpid() {
		t.Fatalf("KeptSummaries while it runs: %+v, %v", kept, err)
	}
	if !strings.Contains(kept[0].String(), "the workshop running now (process ") || !strings.Contains(kept[0].String(), "keeps the room's summary in "+path) {
		t.Errorf("said: %s", kept[0])
	}

	ada := attend(t, w, "ada", 100, 30, "", nil)
	ada.waitFor("Lesson: Idempotency")
	sendQuestion(w, 1)
	ada.waitFor("question 2 of 5")
	ada.press("space", "enter")
	q := quiz.Checkpoint().Questions[1].ID
	waitUntil(t, "ada's answer and progress on disk", func() string {
		s := onDisk()
		if len(s.Attendees) != 1 || len(s.Attendees[0].Answers) != 1 || s.Attendees[0].Answers[0].Question != q || !strings.Contains(string(s.Attendees[0].Progress), q) {
			return "not yet"
		}
		return "there"
	}, func(s string) bool { return s == "there" })
	if s := onDisk(); !s.Ended.IsZero() {
		t.Errorf("the summary says ended while the workshop runs: %+v", s)
	}

	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.SummaryFile(); err != nil {
		t.Errorf("the last write: %v", err)
	}
	if s := onDisk(); !s.Ended.Equal(sum.Ended) || len(s.Attendees) != 1 || s.Attendees[0].Name != "ada" {
		t.Errorf("the summary after Close: %+v, want the one Close returned", s)
	}
	if kept, err := KeptSummaries(markers); err != nil || len(kept) != 0 {
		t.Errorf("KeptSummaries after Close: %+v, %v; want none", kept, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".summary-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A marker whose workshop has gone (no process holds its lock) is said
// once, with the summary it names, then forgotten; one that is not a
// marker is removed; a summary that cannot be read is said so.
func TestKeptSummariesSaysAWorkshopThatNeverEndedOnce(t *testing.T) {
	dir := t.TempDir()
	r := room.New(5)
	if _, err := r.Join("ada", "192.0.2.1:1", 80, 24, func(any) {}); err != nil {
		t.Fatal(err)
	}
	s := r.Summary(time.Time{}) // not ended: the workshop never did
	s.Saved = s.Started.Add(90 * time.Minute)
	path := filepath.Join(dir, "learn-workshop-x.json")
	if err := writeSummaryFile(path, s); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("learn-workshop-a-1.running", `{"summary":"`+path+`","pid":1,"started":"2026-05-02T09:00:00Z"}`)
	write("learn-workshop-b-2.running", `{"summary":"`+filepath.Join(dir, "gone.json")+`","pid":2,"started":"2026-05-02T10:00:00Z"}`)
	write("learn-workshop-c-3.running", "") // debris

	kept, err := KeptSummaries(dir)
	if err != nil || len(kept) != 2 {
		t.Fatalf("KeptSummaries: %+v, %v; want two", kept, err)
	}
	if k := kept[0]; k.Running || k.Path != path || k.Attendees != 1 || !k.Saved.Equal(s.Saved) ||
		!strings.Contains(k.String(), "did not end (killed, crashed or a power cut); its room's summary, as kept at ") ||
		!strings.Contains(k.String(), "(1 attendee), is in "+path) {
		t.Errorf("the workshop that never ended: %+v, said %q", k, k)
	}
	if k := kept[1]; k.Err == nil || !strings.Contains(k.String(), "cannot be read now") {
		t.Errorf("the one whose summary is gone: %+v, said %q", k, k)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.running")); len(left) != 0 {
		t.Errorf("markers left after they were said: %v", left)
	}
	if again, _ := KeptSummaries(dir); len(again) != 0 {
		t.Errorf("said twice: %+v", again)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the summary itself was touched: %v", err)
	}
}

// When learn's own summary directory cannot be made (a home that cannot
// be written), the marker goes beside the summary, where the next
// workshop with the same --summary-dir finds it: the workshop starts.
func TestSummaryMarkerFallsBackBesideTheSummary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w := startWorkshop(t, Config{SummaryDir: dir, markers: filepath.Join(file, "workshops")})
	path, _ := w.SummaryFile()
	kept, err := KeptSummaries(dir)
	if err != nil || len(kept) != 1 || !kept[0].Running || kept[0].Path != path {
		t.Errorf("KeptSummaries beside the summary: %+v, %v", kept, err)
	}
}
