package workshop

import (
	"slices"
	"testing"

	"github.com/learn-idempotency/learn/internal/ttyin/ttyintest"
)

// randomSessionBytes is how many random bytes TestNoAttendeesInputEndsTheWorkshop
// types in the hostile attendee's session (drawn from a seed it logs).
const randomSessionBytes = 16 << 10

// Whatever one attendee types or pastes in their session (the sequences
// that panicked Bubble Tea's input decoder, then random bytes and escape
// sequences), the other attendees' sessions go on, a new attendee still
// gets in, and the hostile attendee's own sessions end only as a person
// ends them. Before,
// the first of those sequences panicked the server's process: every
// session was cut, the test binary with them.
func TestNoAttendeesInputEndsTheWorkshop(t *testing.T) {
	w := startWorkshop(t, Config{})
	ada := attend(t, w, "ada", 80, 24, "", nil)
	ada.waitFor("Lesson: Idempotency")
	eve := attend(t, w, "eve", 80, 24, "", nil)
	eve.waitFor("Lesson: Idempotency")

	hostile := ttyintest.Hostile()
	names := make([]string, 0, len(hostile))
	for n := range hostile {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		eve.press(hostile[n])
	}
	seed := ttyintest.Seed(t)
	r := ttyintest.NewRand(seed)
	random := ttyintest.Random(r, randomSessionBytes)
	// The random input may end eve's session as a person can (q, Esc,
	// Ctrl-C in any of its forms): the next of her sessions takes the rest.
	sessions := 1
	for _, read := range ttyintest.Split(r, random, 64) {
		select {
		case err := <-eve.done:
			if exitStatus(err) < 0 {
				t.Fatalf("seed %d (%s=%d): eve's session %d was cut: %v", seed, ttyintest.EnvSeed, seed, sessions, err)
			}
			sessions++
			eve = attend(t, w, "eve", 80, 24, "", nil)
			eve.waitFor("Lesson: Idempotency")
		default:
		}
		_, _ = eve.in.Write(read) // a session that just ended refuses it
	}
	t.Logf("eve typed %d random bytes in %d sessions", len(random), sessions)

	ada.press("down")
	ada.waitFor("Interview card") // ada's session goes on
	cy := attend(t, w, "cy", 80, 24, "", nil)
	cy.waitFor("Lesson: Idempotency") // the server still lets people in
}
