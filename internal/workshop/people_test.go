package workshop

import (
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

// connected is the names of the attendees connected now, and how many
// seats the room has given in all (connected or not).
func connected(w *Workshop) (names []string, seats int) {
	snap := w.Room().Snapshot(0)
	for _, a := range snap.Attendees {
		if a.Connected {
			names = append(names, a.Name)
		}
	}
	return names, len(snap.Attendees)
}

// One connection is one person: however many app sessions it opens (as
// OpenSSH's connection sharing does), it holds one seat, the newest
// session's; each older one ends with a line that says why, and the feed
// says so. Past maxSessionsPerConn open at once, a session is refused.
// Before, one connection and one code took a seat per session (15 of
// them until the room was full).
func TestOneConnectionHoldsOneSeat(t *testing.T) {
	w := startWorkshop(t, Config{MaxAttendees: 5})
	client, err := dial(w, "ada", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	first := attendOn(t, client, 80, 24, "", nil)
	first.waitFor("Play: the lost answer")
	var sessions []*attendee
	for range 3 {
		a := attendOn(t, client, 80, 24, "", nil)
		a.waitFor("Play: the lost answer")
		sessions = append(sessions, a)
		if names, seats := connected(w); len(names) != 1 || names[0] != "ada" || seats != 1 {
			t.Fatalf("one connection holds seats %v (%d given in all), want ada's one", names, seats)
		}
	}
	if err := first.ended(); err != nil {
		t.Errorf("the replaced session ended with %v, want exit status 0", err)
	}
	if !strings.Contains(first.raw.String(), "learn workshop: you opened learn again in a newer session (one learn a person): this one ends here, and your progress goes on there.") {
		t.Errorf("the replaced session was not told why; its end: %q", tail(first.raw.String()))
	}
	feedHas(t, w, "ada opened learn again with the same connection: their earlier session ends (one seat a person)")
	sessions[2].press("down")
	sessions[2].waitFor("Interview card") // the newest answers

	// Four open at once is the most: the newest app and three more
	// sessions that ask for nothing yet.
	var open []*gossh.Session
	for {
		s, err := client.NewSession()
		if err != nil {
			if !strings.Contains(err.Error(), "one connection may have 4 sessions open at once") {
				t.Errorf("the session over the limit: %v", err)
			}
			break
		}
		open = append(open, s)
		if len(open) > maxSessionsPerConn {
			t.Fatalf("one connection opened %d sessions at once", len(open)+1)
		}
	}
	if len(open) != maxSessionsPerConn-1 {
		t.Errorf("opened %d more sessions beside the app, want %d", len(open), maxSessionsPerConn-1)
	}
	feedHas(t, w, "ada from 127.0.0.1 asked for more than 4 sessions over one connection: refused (1 so far)")
}

// A key is one person: the same key from two connections holds one seat,
// the newer's. Two connections that each typed the code are two people.
func TestOneKeyHoldsOneSeatAndEachCodeTypedOne(t *testing.T) {
	w := startWorkshop(t, Config{})
	signer := newSigner(t)
	c1, err := dial(w, "ada", nil, gossh.PublicKeys(signer), password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	a1 := attendOn(t, c1, 80, 24, "", nil)
	a1.waitFor("Play: the lost answer")
	c2, err := dial(w, "ada", nil, gossh.PublicKeys(signer)) // the key alone, trusted now
	if err != nil {
		t.Fatal(err)
	}
	a2 := attendOn(t, c2, 80, 24, "", nil)
	a2.waitFor("Play: the lost answer")
	if names, seats := connected(w); len(names) != 1 || seats != 1 {
		t.Fatalf("one key holds seats %v (%d in all), want one", names, seats)
	}
	if err := a1.ended(); err != nil {
		t.Errorf("the older session of the key ended with %v", err)
	}
	feedHas(t, w, "ada opened learn again with the same key: their earlier session ends (one seat a person)")

	b1 := attend(t, w, "ben", 80, 24, "", nil)
	b2 := attend(t, w, "ben", 80, 24, "", nil)
	b1.waitFor("Play: the lost answer")
	b2.waitFor("Play: the lost answer")
	if names, _ := connected(w); len(names) != 3 {
		t.Errorf("connected %v, want ada and two bens (two codes typed: two people as far as the workshop can tell)", names)
	}
}
