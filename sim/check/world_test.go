package check

import (
	"net"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
)

// Two base URLs of two different APIs (two stages, two databases) are no
// pair of API instances: the retry on the second cannot say anything of
// the API, and the row is an error that says so, never a ✗ that blames
// the API. With [seats], the check sees it before it sends; without, by
// the second URL's answer (a 404 for an event it does not know).
func TestTwoAPIsAreNotTwoInstances(t *testing.T) {
	cfg, _ := stageFor(t, sim.Switches{})
	other, _ := stageFor(t, sim.Switches{})
	cfg.URLs[1] = other.URLs[0]
	for _, tc := range []struct {
		name  string
		seats bool
		want  string
	}{
		{"with [seats]", true, "not run: the second base URL, " + other.URLs[0] + ", does not show event"},
		{"without [seats]", false, "answered the retry 404, neither booked nor refused: both urls must be instances of one API"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *cfg
			if !tc.seats {
				c.Seats = nil
			}
			res, err := Run(t.Context(), &c, Options{Only: []string{"other-instance"}})
			if err != nil {
				t.Fatal(err)
			}
			row := res.Rows[0]
			if row.State != Error || !strings.Contains(row.Says, tc.want) || res.Failed != 1 {
				t.Errorf("%s %q; want an error with %q", row.State, row.Says, tc.want)
			}
		})
	}
}

// A retry that got no answer shows nothing of what the API answers it:
// the row is an error that names the base URL and why (the connection
// refused), never the verdict's "the retry on api-2 got the same
// booking".
func TestARetryWithNoAnswerIsNotJudged(t *testing.T) {
	cfg, _ := stageFor(t, sim.Switches{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	cfg.URLs[1], cfg.Seats = closed, nil
	res, err := Run(t.Context(), cfg, Options{Only: []string{"other-instance"}})
	if err != nil {
		t.Fatal(err)
	}
	row := res.Rows[0]
	want := "not judged: the last try of intent 1 (try 3, to api-2 " + closed + ") got no answer: "
	if row.State != Error || !strings.Contains(row.Says, want) || !strings.Contains(row.Says, "connection refused") || row.Passages[len(row.Passages)-1].Error == "" {
		t.Errorf("%s %q; want an error with %q and the refused connection", row.State, row.Says, want)
	}
}

// A [bookings] key pointer that names another field of the listed
// booking (its user) is the config's error, named, never the API's
// "told of a booking that the table does not hold".
func TestAWrongBookingsKeyPointerIsNamed(t *testing.T) {
	cfg, _ := stageFor(t, sim.Switches{})
	cfg.Read.Key = "/user_id"
	res, err := Run(t.Context(), cfg, Options{Only: []string{"lost-answer"}})
	if err != nil {
		t.Fatal(err)
	}
	row := res.Rows[0]
	if want := "a key the check never sent: point bookings.key at each booking's idempotency key"; row.State != Error || !strings.Contains(row.Says, want) {
		t.Errorf("%s %q; want an error with %q", row.State, row.Says, want)
	}
}
