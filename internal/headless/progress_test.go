package headless

import "testing"

// The hostile trial: reset asked to forget "pages read, scores, the
// drill's schedule" only, while the file also held the design lab's
// challenges. The reset question names everything the file holds.
func TestResetQuestionNamesWhatTheFileHolds(t *testing.T) {
	if q := resetQuestion("/p/progress.json"); q != "Forget everything in /p/progress.json (pages read, quiz scores, the design lab's challenges, the drill's schedule)? [y/N] " {
		t.Errorf("the reset question: %q", q)
	}
}
