package quiz

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/progress"
)

// Known names every question of every set and every prompt of the drill,
// in order: a store that reads with it keeps every answer this learn can
// give, and nothing else.
func TestKnownNamesEveryQuestion(t *testing.T) {
	known := Known()
	for _, s := range Sets() {
		var ids []string
		for _, q := range s.Questions {
			ids = append(ids, q.ID)
		}
		if !slices.Equal(known[s.ID], ids) {
			t.Errorf("Known()[%s] = %q, want %q", s.ID, known[s.ID], ids)
		}
	}
	var prompts []string
	for _, p := range Interview().Prompts {
		prompts = append(prompts, p.ID)
	}
	if !slices.Equal(known[SetInterview], prompts) {
		t.Errorf("Known()[%s] = %q, want %q", SetInterview, known[SetInterview], prompts)
	}
	if len(known) != len(Sets())+1 {
		t.Errorf("Known() has %d sets, want the %d sets and the drill", len(known), len(Sets()))
	}
}

// A set whose last question is answered and whose attempt is not finished
// yet is saved with next = its length (the quiz screen does so): a store
// that knows this learn's questions takes it as no damage, says nothing
// and makes no copy; an answer to a question the set does not have is
// left out and said.
func TestStoreWithKnownTakesWhatTheQuizSaves(t *testing.T) {
	n := len(Checkpoint().Questions)
	path := filepath.Join(t.TempDir(), progress.FileName)
	file := fmt.Sprintf(`{"version": %d, "sets": {"checkpoint": {"next": %d, "answers": {"%s": {"score": 1}}}}}`,
		progress.CurrentVersion, n, Checkpoint().Questions[0].ID)
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &progress.Store{Path: path, Known: Known}
	p, notices, err := s.Load()
	if err != nil || len(notices) != 0 || p.Sets[SetCheckpoint].Next != n {
		t.Errorf("next = %d of %d questions: %v, notices %q, next now %d", n, n, err, notices, p.Sets[SetCheckpoint].Next)
	}
	if copies, _ := filepath.Glob(path + ".damaged-*"); len(copies) != 0 {
		t.Errorf("a copy was made: %v", copies)
	}

	file = fmt.Sprintf(`{"version": %d, "sets": {"checkpoint": {"answers": {"checkpoint/77": {"score": 1}}}}}`, progress.CurrentVersion)
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	p, notices, err = s.Load()
	if _, kept := p.Sets[SetCheckpoint].Answers["checkpoint/77"]; err != nil || kept || !strings.Contains(strings.Join(notices, "\n"), "sets.checkpoint.answers.checkpoint/77") {
		t.Errorf("an answer to no question: %v, kept %v, notices %q", err, kept, notices)
	}
}
