package quiz

import (
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/progress"
)

func TestSummary(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	p := progress.NewProgress()
	p.UpdatedAt = now.Add(-time.Hour)
	p.MarkRead(LessonSlug, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	p.Record(SetCheckpoint, "checkpoint/1", 1, now)
	p.Record(SetCheckpoint, "checkpoint/2", 0.5, now)
	p.FinishAttempt(SetCheckpoint, 0.8)
	p.FinishAttempt(SetCheckpoint, 0.6)
	p.Record(SetRedraw, "redraw/lost-answer", 0.5, now)
	for _, c := range Cards()[:3] {
		Rate(p, c.ID, Good, now) // due tomorrow
	}
	Rate(p, Cards()[3].ID, Again, now) // due in 10 minutes
	p.DrillSeconds = 25
	p.PassChallenge("lab/last-seats", time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC))
	p.PassChallenge("lab/gone-in-a-newer-learn", now) // not counted
	p.Resume = progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: "broken"}

	got := Summary(p, now)
	for _, want := range []string{
		"Progress, last saved 14 Mar 2026 11:00.",
		"Pages read: 1 of 2",
		"  [x] Idempotency (read 2 Mar 2026)",
		"  [ ] How do you make a booking retry safe",
		"  Checkpoint         best 80%, last 60%, 2 attempts; 2 of 5 answered",
		"  Break it           not tried yet",
		"  Predict, then run  not tried yet",
		"  Redraw it          1 of 1 answered",
		"  Interview drill    not tried yet",
		// The hostile trial: the home screen said "1 of 5 challenges",
		// learn progress nothing about the lab.
		"Design lab challenges: 1 of 6 passed",
		"  [x] The last seats (passed 3 Mar 2026)",
		"  [ ] Either guard will do",
		"Flashcards: 13 of 16 due today (12 new)",
		"Spoken answers: 25 s countdown",
		"Resume at: play › lost-answer › broken",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	// Sets come in home-menu order, the drill last.
	order := []string{"Checkpoint ", "Break it ", "Predict, then run ", "Redraw it ", "Interview drill "}
	last := -1
	for _, o := range order {
		i := strings.Index(got, "  "+o)
		if i < last {
			t.Errorf("%q out of order:\n%s", o, got)
		}
		last = i
	}
	if !strings.HasSuffix(got, "\n") {
		t.Error("summary does not end in a newline")
	}

	once := progress.NewProgress()
	once.FinishAttempt(SetCheckpoint, 1)
	if got, want := Summary(once, now), "best 100%, last 100%, 1 attempt;"; !strings.Contains(got, want) {
		t.Errorf("summary lacks %q:\n%s", want, got)
	}

	empty := Summary(nil, now)
	for _, want := range []string{"nothing saved yet", "Pages read: 0 of 2", "Design lab challenges: 0 of 6 passed", "Flashcards: 16 of 16 due today (16 new)", "Spoken answers: 30 s", "Resume at: the home screen"} {
		if !strings.Contains(empty, want) {
			t.Errorf("empty summary lacks %q:\n%s", want, empty)
		}
	}
}

// Progress with something in it but no save time (a file written by hand,
// or one whose updated_at was set aside) is not "nothing saved yet".
func TestSummaryWithoutASaveTime(t *testing.T) {
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	p := progress.NewProgress()
	if got := Summary(p, now); !strings.HasPrefix(got, "Progress: nothing saved yet.\n") || !IsBlank(p, now) {
		t.Errorf("empty progress: blank %v, summary:\n%s", IsBlank(p, now), got)
	}
	p.MarkRead("idempotency", now)
	p.UpdatedAt = time.Time{}
	if got := Summary(p, now); !strings.HasPrefix(got, "Progress (when it was last saved is not recorded).\n") || IsBlank(p, now) {
		t.Errorf("a page read, no save time: blank %v, summary:\n%s", IsBlank(p, now), got)
	}
}

// The place to resume at is said by its parts, in the order of a Place.
func TestResumeText(t *testing.T) {
	for _, c := range []struct {
		at   progress.Place
		want string
	}{
		{progress.Place{}, "the home screen"},
		{progress.Place{Page: progress.PageReader, Name: LessonSlug, Section: "Picture it"}, "reader › idempotency › Picture it"},
		{progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: "broken"}, "play › lost-answer › broken"},
		{progress.Place{Page: progress.PageQuiz, Name: SetCheckpoint, Step: 2}, "quiz › checkpoint, step 2"},
		{progress.Place{Page: progress.PageDrill}, "drill"},
	} {
		if got := resumeText(c.at); got != c.want {
			t.Errorf("resumeText(%+v) = %q, want %q", c.at, got, c.want)
		}
	}
}
