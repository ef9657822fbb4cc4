package check

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

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
		name         string
		seats, lists bool
		want         string
	}{
		{"with [seats]", true, true, "could not run: the second base URL, " + other.URLs[0] + ", does not show event"},
		{"with [bookings]", false, true, "could not run: after the booking on the first base URL, the second, " + other.URLs[0] + ", lists no booking with its key"},
		{"with neither", false, false, "answered the retry 404, neither booked nor refused: both urls must be instances of one API"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *cfg
			if !tc.seats {
				c.Seats = nil
			}
			if !tc.lists {
				c.Read = nil
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
	cfg.URLs[1], cfg.Seats, cfg.Read = closed, nil, nil
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

// sqlRead is the example's [database] for learn serve.
var sqlRead = &Database{
	Bookings: "SELECT 'b' || id, user_id, idempotency_key, event_id, quantity FROM bookings WHERE idempotency_key::text = ANY($1)",
	Seats:    "SELECT seats_left FROM events WHERE id = $1",
}

// Two base URLs that reach one address (localhost and 127.0.0.1, one
// port) are one API instance: the retry on "another" is no such retry.
func TestOneInstanceUnderTwoNamesIsNoPair(t *testing.T) {
	cfg, _ := stageFor(t, sim.Switches{})
	cfg.URLs[1] = strings.Replace(cfg.URLs[0], "127.0.0.1", "localhost", 1)
	wantError(t, firstRow(t, cfg, Options{Only: []string{"other-instance"}}), "reach one address, so one API instance")
}

// Two separate APIs that number their events alike (a fixed event.id,
// the same seats) look the same before the run; the booking on the
// first shows in the seats of one and not the other, and the row says
// so, never the ✓ "the retry on api-2 got the same booking" that a
// booking b1 in each gave.
func TestTwoAPIsThatLookAlikeAreToldApart(t *testing.T) {
	cfg, st := stageFor(t, sim.Switches{})
	_, other := stageFor(t, sim.Switches{})
	var ids []int64
	// The first stage's event gives the read back its 3 seats first.
	for i, s := range []*sim.Stage{st, other} {
		id, err := s.AddEvent(t.Context(), "Same", 300-3*i, time.Now().Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if ids[0] != ids[1] {
		t.Fatalf("events %v: the stages should number alike", ids)
	}
	cfg.URLs[1] = other.Instances[0].URL
	cfg.Event = Event{ID: ids[0]}
	wantError(t, firstRow(t, cfg, Options{Only: []string{"other-instance"}}), "event 1 has 295 seats left there and 297 at the second")
}

// With the bookings and seats read from the first API's database only,
// nothing shows that the second base URL shares it: the retry on another
// instance is "not checked", never ✓.
func TestARetryOnAnotherInstanceSeenByNothingIsNotChecked(t *testing.T) {
	cfg, st := stageFor(t, sim.Switches{})
	cfg.Read, cfg.Seats, cfg.Database = nil, nil, sqlRead
	res, err := Run(t.Context(), cfg, Options{Only: []string{"lost-answer", "other-instance"}, DatabaseURL: st.Schema.ConnString()})
	if err != nil {
		t.Fatal(err)
	}
	if lost, other := res.Rows[0], res.Rows[1]; lost.State != Pass || other.State != NotChecked || !slices.Contains(other.NotChecked, notShownShared) {
		t.Errorf("lost answer %s %q; other instance %s %q %v", lost.State, lost.Says, other.State, other.Says, other.NotChecked)
	}
}

// A config that reads a plain booking back otherwise than it was sent (a
// user's id that is not the API's, the id in another form, a pointer at
// another field) stops the check before any scenario, saying which: each
// would have made a scenario blame the API (a "data leak", a booking
// "the table does not hold").
func TestAConfigThatMisreadsAPlainBookingStopsTheCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"a user's id in the answer", func(c *Config) { c.Users[1].ID = "42" }, `its user at answer.user (/booking/user_id) is "ben", and ben's id is "42": give each user's id as the API shows it`},
		{"a user's id in the table", func(c *Config) { c.Users[1].ID, c.Answer.User = "42", "" }, `with user "ben", and ben's id is "42": give each user's id as the API stores it`},
		{"the id's form", func(c *Config) {
			db := *sqlRead
			db.Bookings = strings.Replace(db.Bookings, "'b' || id", "id::text", 1)
			c.Database = &db
		}, `as booking "1": answer.booking_id and bookings.id (database.bookings' id) must read the same id`},
		{"the seats", func(c *Config) {
			db := *sqlRead
			db.Seats = "SELECT id FROM events WHERE id = $1"
			c.Database = &db
		}, "before two plain bookings of 1 and 2 seats, and 1 after: do [seats] (database.seats) read the event's seats left?"},
		{"the answer's event", func(c *Config) { c.Database, c.Answer.Event = sqlRead, "/booking/quantity" }, "its event at answer.event (/booking/quantity) is "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, st := stageFor(t, sim.Switches{})
			cfg.Read, cfg.Seats, cfg.Database = nil, nil, sqlRead
			tc.edit(cfg)
			res, err := Run(t.Context(), cfg, Options{Only: []string{"lost-answer", "two-users-same-key"}, DatabaseURL: st.Schema.ConnString()})
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range res.Rows {
				if row.State != Error || !strings.Contains(row.Says, tc.want) {
					t.Errorf("%s: %s %q\nwant an error with %q", row.Name, row.State, row.Says, tc.want)
				}
			}
		})
	}
}

// On a shared event (event.id) with fewer seats than the scenarios take,
// the check says how many it needs before it sends anything; with none
// passed, the summary says nothing was shown to hold.
func TestASharedEventTooSmallIsSaidFirst(t *testing.T) {
	cfg, st := stageFor(t, sim.Switches{})
	id, err := st.AddEvent(t.Context(), "Small", 20, time.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Event = Event{ID: id}
	res, err := Run(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("event %d has 20 seats left, and these scenarios take %d of it", id, seatsNeeded(slices.DeleteFunc(slices.Clone(scenarios), func(s scenario) bool { return s.harness })))
	for _, row := range res.Rows {
		if row.State != NotRun && (row.State != Error || !strings.Contains(row.Says, want)) {
			t.Errorf("%s: %s %q", row.Name, row.State, row.Says)
		}
	}
	rd, err := newReader(t.Context(), cfg, &http.Client{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if left, _, _ := rd.seatsLeft(t.Context(), id); left != 20 || res.Passed != 0 || !strings.HasSuffix(res.Summary, "none passed, so nothing was shown to hold") {
		t.Errorf("%d seats left after; %d passed, %q", left, res.Passed, res.Summary)
	}
}

// Two base URLs reach one address when their hosts look up to one: a
// name and its address, localhost's ::1 and 127.0.0.1; two loopback
// addresses of their own are two.
func TestAddressesOfBaseURLs(t *testing.T) {
	overlap := func(a, b string) bool {
		x, y := addrsOf(t.Context(), a), addrsOf(t.Context(), b)
		return slices.ContainsFunc(x, func(v string) bool { return slices.Contains(y, v) })
	}
	for _, tc := range []struct {
		a, b string
		one  bool
	}{
		{"http://localhost:8081", "http://127.0.0.1:8081", true},
		{"http://[::1]:8081", "http://127.0.0.1:8081", true},
		{"http://127.0.0.1:8081", "http://127.0.0.1:08081", true},
		{"http://127.0.0.1:8081", "http://127.0.0.2:8081", false},
		{"http://127.0.0.1:8081", "http://127.0.0.1:8082", false},
	} {
		if got := overlap(tc.a, tc.b); got != tc.one {
			t.Errorf("%s and %s: one address %v, want %v", tc.a, tc.b, got, tc.one)
		}
	}
}

// A front door and the one instance behind it are no two instances: an
// API that names its instance on each answer (learn's X-Learn-Instance)
// shows that both base URLs reached one, and the row says so.
func TestAFrontDoorAndItsInstanceAreNoPair(t *testing.T) {
	cfg, st := stageFor(t, sim.Switches{})
	u, err := url.Parse(st.Instances[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	door := httptest.NewServer(httputil.NewSingleHostReverseProxy(u))
	defer door.Close()
	cfg.URLs[1] = door.URL
	wantError(t, firstRow(t, cfg, Options{Only: []string{"other-instance"}}), "both base URLs were answered by one API instance (X-Learn-Instance: api-1 at each)")
}

// Two separate APIs, each with its own event 1, read back only through
// the first one's database: the second's booking is not in it, and
// nothing read through the second shows it shares it, so the row cannot
// judge, never the ✗ "told of a booking that the table does not hold".
func TestTwoAPIsReadBySQLAreNotJudged(t *testing.T) {
	cfg, st := stageFor(t, sim.Switches{})
	_, other := stageFor(t, sim.Switches{})
	for _, s := range []*sim.Stage{st, other} {
		if _, err := s.AddEvent(t.Context(), "Same", 300, time.Now().Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	cfg.URLs[1] = other.Instances[1].URL // api-2, as a second instance of one API would say
	cfg.Event, cfg.Read, cfg.Seats, cfg.Database = Event{ID: 1}, nil, nil, sqlRead
	wantError(t, firstRow(t, cfg, Options{Only: []string{"other-instance"}, DatabaseURL: st.Schema.ConnString()}), "the second base URL answered a booking that the database the check reads does not hold")
}

// firstRow runs the check of cfg with opts and returns its first row.
func firstRow(t *testing.T, cfg *Config, opts Options) Row {
	t.Helper()
	res, err := Run(t.Context(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Rows[0]
}

// wantError fails t unless row is an error that says want.
func wantError(t *testing.T, row Row, want string) {
	t.Helper()
	if row.State != Error || !strings.Contains(row.Says, want) {
		t.Errorf("%s: %s %q\nwant an error with %q", row.Name, row.State, row.Says, want)
	}
}
