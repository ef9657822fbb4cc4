package check

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Config is what learn check knows of the API it checks: where it books,
// what a booking request looks like, who the users are, how a booked
// answer names its booking, and (optionally) how to read back what was
// booked. It is read from TOML ([Parse]); [Example] is the commented one
// for learn serve that learn check --init writes.
type Config struct {
	// URLs are the API's base URLs: one, or two API instances of it (a
	// retry that lands on another instance is checked with two).
	URLs    []string  `toml:"urls"`
	Request Request   `toml:"request"`
	Users   []User    `toml:"users"`
	Answer  Answer    `toml:"answer"`
	Event   Event     `toml:"event"`
	Read    *Bookings `toml:"bookings"`
	Seats   *Seats    `toml:"seats"`
	// Database reads the bookings and seats with SQL, against the API's
	// database (learn check --database-url), in place of Read and Seats.
	Database *Database `toml:"database"`
}

// Request is the shape of one try of a booking.
type Request struct {
	Method string `toml:"method"`
	// Path and Body are a try's, with {event} and {quantity} filled in
	// as they are (a JSON string needs its quotes around them).
	Path        string `toml:"path"`
	Body        string `toml:"body"`
	ContentType string `toml:"content_type"`
	// KeyHeader carries the idempotency key, a new UUID per intent.
	KeyHeader string `toml:"key_header"`
}

// User is one user of the API: the headers that make a request theirs.
type User struct {
	Name string `toml:"name"`
	// ID is the user's id as the API stores it and its answers show it;
	// "" is Name.
	ID      string            `toml:"id"`
	Headers map[string]string `toml:"headers"`
}

// UserID is u's id as the API has it.
func (u User) UserID() string {
	if u.ID != "" {
		return u.ID
	}
	return u.Name
}

// Answer says how an answer reads.
type Answer struct {
	// Booked are the statuses of an answer that made or replayed a
	// booking; Refused those of a refusal (409 and 422 both are).
	Booked  []int `toml:"booked"`
	Refused []int `toml:"refused"`
	// BookingID is the JSON pointer (RFC 6901) to the booking's id in a
	// booked answer; User, Event and Quantity, when set, to its user,
	// event and quantity (what is not set is not checked).
	BookingID string `toml:"booking_id"`
	User      string `toml:"user"`
	Event     string `toml:"event"`
	Quantity  string `toml:"quantity"`
}

// Event is the resource the check books, a few seats at a time: a
// fresh one per scenario made with Create, or the one ID names (then the
// scenarios that need an event of their own, with a known number of seats,
// are not run).
type Event struct {
	ID     int64        `toml:"id"`
	Create *CreateEvent `toml:"create"`
}

// CreateEvent says how to add an event: a POST of Path with the first
// user's headers and Body ({seats} filled in), the new event's id at the
// JSON pointer ID of the answer.
type CreateEvent struct {
	Path string `toml:"path"`
	Body string `toml:"body"`
	ID   string `toml:"id"`
}

// Seats says how to read an event's seats left: a GET of Path ({event}
// filled in) with the first user's headers, the number at the JSON
// pointer Left.
type Seats struct {
	Path string `toml:"path"`
	Left string `toml:"left"`
}

// Database holds the SQL that reads what the API stored, run against its
// database: Bookings gets $1, the keys the check sent (text[]), and
// returns id, user_id, idempotency_key, event_id and quantity (any types
// that read as text); Seats gets $1, an event id, and returns its seats
// left. Either may be left out.
type Database struct {
	Bookings string `toml:"bookings"`
	Seats    string `toml:"seats"`
}

// Bookings says how to read back a user's bookings: a GET of Path with
// the user's headers, the list at List in its body ("" is the body), and
// in each item the pointers to its id, key, event and quantity (all four
// are needed to tell whose intent a booking is).
type Bookings struct {
	Path     string `toml:"path"`
	List     string `toml:"list"`
	ID       string `toml:"id"`
	Key      string `toml:"key"`
	Event    string `toml:"event"`
	Quantity string `toml:"quantity"`
}

// Example is the commented config for learn serve (learn check --init).
//
//go:embed example.toml
var Example string

// Parse reads a config and checks it: every field that is needed, URLs
// that are http(s) base URLs, at least two users with distinct names, a
// body with {event} and {quantity}, JSON pointers that parse, and no key
// that the config does not have (a typo would otherwise be ignored). The
// error says where and what to write instead.
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(c)
	if err != nil {
		return nil, fmt.Errorf("the config is not TOML learn check reads: %w", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("the config has keys learn check does not know: %s (learn check --init writes every key it reads)", strings.Join(keys, ", "))
	}
	c.defaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) defaults() {
	if c.Request.Method == "" {
		c.Request.Method = "POST"
	}
	if c.Request.ContentType == "" {
		c.Request.ContentType = "application/json"
	}
	if c.Request.KeyHeader == "" {
		c.Request.KeyHeader = "Idempotency-Key"
	}
	if len(c.Answer.Booked) == 0 {
		c.Answer.Booked = []int{200, 201}
	}
	if len(c.Answer.Refused) == 0 {
		c.Answer.Refused = []int{409, 422}
	}
}

func (c *Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch n := len(c.URLs); {
	case n == 0:
		bad(`urls: give the API's base URL, e.g. urls = ["http://127.0.0.1:8080"]`)
	case n > 2:
		bad("urls: give one base URL, or two API instances of the same API (got %d)", n)
	}
	var hosts []string
	for _, u := range c.URLs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || (p.Path != "" && p.Path != "/") || p.RawQuery != "" {
			bad("urls: %q is not a base URL such as http://127.0.0.1:8080 (the path goes in request.path)", u)
			continue
		}
		hosts = append(hosts, strings.ToLower(p.Scheme+"://"+hostPort(p)))
	}
	if len(hosts) == 2 && hosts[0] == hosts[1] {
		bad("urls: %q and %q are one API instance: give two instances of one API (or one URL)", c.URLs[0], c.URLs[1])
	}
	if !strings.HasPrefix(c.Request.Path, "/") {
		bad(`request.path: the path that books, from the base URL, e.g. path = "/bookings"`)
	}
	for _, p := range []string{"{event}", "{quantity}"} {
		if !strings.Contains(c.Request.Body+c.Request.Path, p) {
			bad("request.body (or request.path): it must hold %s, where the check puts the booking's %s", p, strings.Trim(p, "{}"))
		}
	}
	if len(c.Users) < 2 {
		bad("users: give at least two users ([[users]] with a name and the headers that make a request theirs): the check sends the same key as two users")
	}
	seen := map[string]bool{}
	for i, u := range c.Users {
		if u.Name == "" || seen[u.Name] {
			bad("users[%d]: each user needs a name of its own", i)
		}
		seen[u.Name] = true
		for j, v := range c.Users[:i] {
			if maps.Equal(u.Headers, v.Headers) {
				bad("users: %s and %s send the same headers, so the API sees one user: give each the headers (a token) that make a request theirs", v.Name, u.Name)
			} else if u.UserID() == v.UserID() {
				bad("users[%d]: %s has the id %q, as %s has: give each user's id as the API stores it", i, u.Name, u.UserID(), c.Users[j].Name)
			}
		}
	}
	if c.Answer.BookingID == "" {
		bad(`answer.booking_id: the JSON pointer to the booking's id in a booked answer, e.g. booking_id = "/booking/id"`)
	}
	for _, s := range c.Answer.Booked {
		if s < 200 || s > 299 {
			bad("answer.booked: %d is not a 2xx status", s)
		}
		if slices.Contains(c.Answer.Refused, s) {
			bad("answer: %d is both booked and refused", s)
		}
	}
	for _, s := range c.Answer.Refused {
		if s < 400 || s > 499 {
			bad("answer.refused: %d is not a 4xx status", s)
		}
	}
	switch ce := c.Event.Create; {
	case ce != nil && c.Event.ID != 0:
		bad("event: give event.id or [event.create], not both")
	case ce == nil && c.Event.ID < 1:
		bad("event: give [event.create], how to add an event for each scenario, or event.id, the id of the event (the resource) the check books, put in {event}")
	case ce != nil:
		if !strings.HasPrefix(ce.Path, "/") {
			bad(`event.create.path: the path that adds an event, e.g. path = "/events"`)
		}
		if !strings.Contains(ce.Body, "{seats}") {
			bad("event.create.body: it must hold {seats}, where the check puts the new event's seats")
		}
		if ce.ID == "" {
			bad(`event.create.id: the JSON pointer to the new event's id in the answer, e.g. id = "/id"`)
		}
	}
	if st := c.Seats; st != nil {
		if !strings.HasPrefix(st.Path, "/") || !strings.Contains(st.Path, "{event}") {
			bad(`seats.path: the path that reads one event, with {event} for its id, e.g. path = "/events/{event}"`)
		}
		if st.Left == "" {
			bad(`seats.left: the JSON pointer to the event's seats left, e.g. left = "/seats_left"`)
		}
	}
	if db := c.Database; db != nil && db.Bookings == "" && db.Seats == "" {
		bad("database: give bookings or seats, the SQL that reads them (or leave the table out)")
	}
	pointers := map[string]string{"answer.booking_id": c.Answer.BookingID, "answer.user": c.Answer.User,
		"answer.event": c.Answer.Event, "answer.quantity": c.Answer.Quantity}
	if ce := c.Event.Create; ce != nil {
		pointers["event.create.id"] = ce.ID
	}
	if st := c.Seats; st != nil {
		pointers["seats.left"] = st.Left
	}
	if r := c.Read; r != nil {
		if !strings.HasPrefix(r.Path, "/") {
			bad(`bookings.path: the path that lists a user's bookings, e.g. path = "/bookings"`)
		}
		if r.ID == "" || r.Key == "" || r.Event == "" || r.Quantity == "" {
			bad(`bookings: id, key, event and quantity are the JSON pointers into each listed booking, e.g. id = "/id", key = "/idempotency_key", event = "/event_id", quantity = "/quantity"`)
		}
		for k, v := range map[string]string{"bookings.list": r.List, "bookings.id": r.ID, "bookings.key": r.Key, "bookings.event": r.Event, "bookings.quantity": r.Quantity} {
			pointers[k] = v
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pointers)) {
		if p := pointers[name]; p != "" {
			if _, err := parsePointer(p); err != nil {
				bad("%s: %q is not a JSON pointer (RFC 6901), such as /booking/id: %s", name, p, strings.Join(strings.Fields(err.Error()), " "))
			}
		}
	}
	return errors.Join(errs...)
}

// hostPort is u's host and port, the scheme's default port written out:
// http://h and http://h:80 are one instance.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if n, err := strconv.Atoi(port); err == nil {
		port = strconv.Itoa(n) // 038081 dials 38081
	}
	return net.JoinHostPort(u.Hostname(), port)
}
