package common

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// press is one key press that saves (m marks a page read): the change is
// queued, and its result taken back as the root does.
func press(t *testing.T, pr *Progress, slug string) {
	t.Helper()
	cmd := pr.Save(func(p *progress.Progress) { p.MarkRead(slug, time.Now()) })
	if cmd == nil {
		return // kept in memory only
	}
	msg, ok := cmd().(Saved)
	if !ok {
		t.Fatalf("a save's command returned %T", msg)
	}
	pr.Take(msg)
}

// readOnlyHome returns a directory learn cannot write in: a tmpfs mounted
// read-only as root (root writes through any mode), else a 0500 directory.
func readOnlyHome(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return dir
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a read-only tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// The user's report: with a home learn cannot write, 40 presses of m
// stacked 40 copies of "progress not saved: …" on the home screen, which
// filled it. A notice is shown once, however often its cause comes back:
// a state directory that cannot be made, and a progress file the learner
// made read-only (whose notice Load already gave).
func TestANoticeIsShownOnce(t *testing.T) {
	cases := []struct {
		name  string
		store func(t *testing.T) *progress.Store
		want  string
	}{
		{"a read-only home", func(t *testing.T) *progress.Store {
			return &progress.Store{Path: filepath.Join(readOnlyHome(t), ".local", "state", "learn", progress.FileName)}
		}, "progress not saved"},
		{"a read-only progress file", func(t *testing.T) *progress.Store {
			s := &progress.Store{Path: filepath.Join(t.TempDir(), "learn", progress.FileName)}
			if _, err := s.Update(func(p *progress.Progress) error { p.MarkRead("idempotency", time.Now()); return nil }); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(s.Path, 0o400); err != nil {
				t.Fatal(err)
			}
			return s
		}, "read-only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pr := OpenProgress(c.store(t))
			for range 40 {
				press(t, pr, "idempotency")
			}
			if err := pr.Close(func(*progress.Progress) {}); err == nil {
				t.Errorf("Close saved where nothing can be saved")
			}
			notices := pr.Notices()
			if len(notices) != 1 || !strings.Contains(notices[0], c.want) {
				t.Errorf("after 40 presses, %d notices, want one saying %q:\n%s", len(notices), c.want, strings.Join(notices, "\n"))
			}
		})
	}
}

// TestTakeKeepsOneSaveFailure: failures of other causes do not stack
// either: the newest replaces the one shown, and what Load said stays.
func TestTakeKeepsOneSaveFailure(t *testing.T) {
	pr := &Progress{p: progress.NewProgress(), notices: []string{"Your saved progress was in an older format"}}
	for _, cause := range []string{"disk full", "disk full", "read-only file system", "disk full"} {
		pr.Take(Saved{err: errors.New(cause)})
	}
	want := []string{"Your saved progress was in an older format", "progress not saved: disk full"}
	if !slices.Equal(pr.Notices(), want) {
		t.Errorf("notices %q, want %q", pr.Notices(), want)
	}
}

// Progress kept in memory tells every change, the last one at Close too,
// and writes no file.
func TestKeptProgressTellsEveryChange(t *testing.T) {
	start := progress.NewProgress()
	start.MarkRead("idempotency", time.Unix(0, 0))
	var kept []int
	pr := KeptProgress(start, func(p *progress.Progress) { kept = append(kept, len(p.Set(quiz.SetCheckpoint).Answers)) })
	if !pr.Get().IsRead("idempotency") {
		t.Fatal("KeptProgress did not start from the progress it was given")
	}
	if cmd := pr.Save(func(p *progress.Progress) { p.Record(quiz.SetCheckpoint, "checkpoint/1", 1, time.Unix(1, 0)) }); cmd != nil {
		t.Error("Save of progress kept in memory returned a command: it would write a file")
	}
	if err := pr.Close(func(p *progress.Progress) { p.Record(quiz.SetCheckpoint, "checkpoint/2", 0, time.Unix(2, 0)) }); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 || kept[0] != 1 || kept[1] != 2 {
		t.Errorf("kept after each change: %v answers; want [1 2]", kept)
	}
}
