package common

import (
	"testing"
	"time"

	"github.com/learn-idempotency/learn/quiz"
)

// Progress kept in memory tells every change, the last one at Close too,
// and writes no file.
func TestKeptProgressTellsEveryChange(t *testing.T) {
	start := quiz.NewProgress()
	start.MarkRead("idempotency", time.Unix(0, 0))
	var kept []int
	pr := KeptProgress(start, func(p *quiz.Progress) { kept = append(kept, len(p.Set(quiz.SetCheckpoint).Answers)) })
	if !pr.Get().IsRead("idempotency") {
		t.Fatal("KeptProgress did not start from the progress it was given")
	}
	if cmd := pr.Save(func(p *quiz.Progress) { p.Record(quiz.SetCheckpoint, "checkpoint/1", 1, time.Unix(1, 0)) }); cmd != nil {
		t.Error("Save of progress kept in memory returned a command: it would write a file")
	}
	if err := pr.Close(func(p *quiz.Progress) { p.Record(quiz.SetCheckpoint, "checkpoint/2", 0, time.Unix(2, 0)) }); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 || kept[0] != 1 || kept[1] != 2 {
		t.Errorf("kept after each change: %v answers; want [1 2]", kept)
	}
}
