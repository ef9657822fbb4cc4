package dashboard

import (
	"testing"

	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/progress"
)

// Where an attendee is comes from the place their app stands at; the
// title is only the words shown for it. Before, the home screen was told
// by its title ("learn"), so a home page titled otherwise was shown by
// that title, not as "home".
func TestScreenOfIsThePlaceNotTheTitle(t *testing.T) {
	for _, c := range []struct {
		a    room.Attendee
		want string
	}{
		{room.Attendee{}, "home"}, // joined, nothing said yet
		{room.Attendee{Title: "learn", At: progress.Place{Page: progress.PageHome}}, "home"},
		{room.Attendee{Title: "learn · idempotency keys", At: progress.Place{Page: progress.PageHome}}, "home"},
		{room.Attendee{Title: "Checkpoint", At: progress.Place{Page: progress.PageQuiz, Name: "checkpoint", Step: 2}}, "Checkpoint, question 3"},
		{room.Attendee{Title: "Play: The lost answer", At: progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: "broken"}}, "Play: The lost answer (broken)"},
		{room.Attendee{Title: "Play: The lost answer", At: progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: "correct"}}, "Play: The lost answer"},
		{room.Attendee{Title: "learn", At: progress.Place{Page: progress.PageRace}}, "learn"},
	} {
		if got := screenOf(c.a); got != c.want {
			t.Errorf("screenOf(%q at %+v) = %q, want %q", c.a.Title, c.a.At, got, c.want)
		}
	}
}
