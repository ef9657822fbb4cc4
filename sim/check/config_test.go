package check

import (
	"strings"
	"testing"
)

// The example learn check --init writes parses, and says what learn serve
// answers.
func TestExampleParses(t *testing.T) {
	c, err := Parse([]byte(Example))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.URLs) != 2 || c.URLs[0] != "http://127.0.0.1:8081" || c.Request.Path != "/bookings" || len(c.Users) != 2 ||
		c.Users[0].Headers["Authorization"] != "Bearer tok-ada" || c.Users[1].UserID() != "ben" || c.Answer.BookingID != "/booking/id" ||
		c.Event.Create == nil || c.Event.Create.Path != "/events" || c.Seats == nil || c.Seats.Left != "/seats_left" ||
		c.Read == nil || c.Read.Key != "/idempotency_key" || c.Database != nil {
		t.Errorf("%+v", c)
	}
}

// A config learn check cannot use is refused with every fault named by its
// key and what to write instead; a key it does not know (a typo) too.
func TestParseRefusesWhatItCannotUse(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(Example, old) {
			t.Fatalf("the example has no %q", old)
		}
		return strings.Replace(Example, old, new, 1)
	}
	for _, tt := range []struct {
		name, config, want string
	}{
		{"not TOML", "urls = [", "is not TOML"},
		{"a typo", edit("key_header =", "keyheader ="), "keys learn check does not know: request.keyheader"},
		{"no URL", edit(`urls = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]`, `urls = []`), "urls: give the API's base URL"},
		{"a URL with the path", edit(`urls = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]`, `urls = ["http://127.0.0.1:8080/bookings"]`), "the path goes in request.path"},
		{"three URLs", edit(`urls = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]`, `urls = ["http://a:1", "http://b:1", "http://c:1"]`), "got 3"},
		{"no placeholder", edit(`"quantity": {quantity}`, `"quantity": 2`), "request.body (or request.path): it must hold {quantity}"},
		{"one user", edit("[[users]]\nname = \"ben\"\nheaders = { Authorization = \"Bearer tok-ben\" }\n", ""), "at least two users"},
		{"two users of one name", edit(`name = "ben"`, `name = "ada"`), "users[1]: each user needs a name of its own"},
		{"no booking id", edit(`booking_id = "/booking/id"`, `booking_id = ""`), "answer.booking_id"},
		{"a bad pointer", edit(`booking_id = "/booking/id"`, `booking_id = "booking.id"`), `answer.booking_id: "booking.id" is not a JSON pointer`},
		{"a booked 409", edit("booked = [200, 201]", "booked = [200, 409]"), "409 is not a 2xx status"},
		{"no event", edit("[event.create]\npath = \"/events\"\nbody = '{\"name\": \"learn check\", \"seats\": {seats}}'\nid = \"/id\"\n", ""), "event: give [event.create]"},
		{"an event made without its seats", edit(`"seats": {seats}`, `"seats": 10`), "event.create.body: it must hold {seats}"},
		{"seats read without the event", edit(`path = "/events/{event}"`, `path = "/events/1"`), "seats.path"},
		{"an empty database table", edit("[seats]", "[database]\n[seats]"), "database: give bookings or seats"},
		{"a listing without the key", edit(`key = "/idempotency_key"`, `key = ""`), "bookings: id, key, event and quantity"},
		{"one instance twice", edit(`urls = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]`, `urls = ["http://127.0.0.1:80/", "HTTP://127.0.0.1"]`), "are one API instance"},
		{"one instance, its port with a zero", edit(`urls = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]`, `urls = ["http://127.0.0.1:8081", "http://127.0.0.1:08081"]`), "are one API instance"},
		{"two users of one token", edit("Bearer tok-ben", "Bearer tok-ada"), "ada and ben send the same headers, so the API sees one user"},
		{"two users of one id", edit("name = \"ben\"\n", "name = \"ben\"\nid = \"ada\"\n"), `ben has the id "ada", as ada has`},
		{"an event given and made", edit("[event.create]\n", "[event]\nid = 3\n[event.create]\n"), "give event.id or [event.create], not both"},
	} {
		_, err := Parse([]byte(tt.config))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
