package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// POST /events adds an event that any user may then book: 201 with the
// event and its Location, the seats asked for; a body that is not
// {"name", "seats"} within the limits is 400 invalid_body and adds
// nothing; without a user it is 401.
func TestAPIAddsAnEvent(t *testing.T) {
	s := newAPIStage(t)
	status, header, body := s.doH(t, apiReq{method: "POST", path: "/events", auth: authAda, body: `{"name": "learn check", "seats": 2}`})
	var ev engine.EventRow
	if err := json.Unmarshal(body, &ev); err != nil || status != http.StatusCreated {
		t.Fatalf("%d %s (%v), want 201 and the event", status, body, err)
	}
	if ev.Name != "learn check" || ev.SeatsLeft != 2 || ev.ID < 1 || header.Get("Location") != "/events/"+strconv.FormatInt(ev.ID, 10) {
		t.Errorf("event %+v, Location %q", ev, header.Get("Location"))
	}
	s.ids["{new}"] = ev.ID
	if b := s.book(t, authBen, apiFreshKey, `{"event_id": {new}, "quantity": 2}`); b.Booking.EventID != ev.ID || b.Booking.Quantity != 2 {
		t.Errorf("booked %+v on the new event", b.Booking)
	}

	for _, tc := range []struct{ name, auth, body string }{
		{"no seats", authAda, `{"name": "x"}`},
		{"negative seats", authAda, `{"name": "x", "seats": -1}`},
		{"too many seats", authAda, `{"name": "x", "seats": 1000001}`},
		{"blank name", authAda, `{"name": "  ", "seats": 1}`},
		{"long name", authAda, `{"name": "` + strings.Repeat("é", api.MaxEventName+1) + `", "seats": 1}`},
		{"unknown field", authAda, `{"name": "x", "seats": 1, "price": 3}`},
		{"two objects", authAda, `{"name": "x", "seats": 1} {}`},
		{"not JSON", authAda, `seats=1`},
		{"no user", "", `{"name": "x", "seats": 1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.tables(t)
			status, ctype, body := s.do(t, apiReq{method: "POST", path: "/events", auth: tc.auth, body: tc.body})
			want, code := http.StatusBadRequest, api.CodeInvalidBody
			if tc.auth == "" {
				want, code = http.StatusUnauthorized, engine.CodeUnauthorized
			}
			if e := decodeAPIError(t, body); status != want || ctype != api.ContentTypeProblem || e.Code != code || e.Message == "" {
				t.Errorf("%d %s %s, want %d %s", status, ctype, body, want, code)
			}
			if after := s.tables(t); after != before {
				t.Errorf("a refused POST /events wrote: before %s, after %s", before, after)
			}
		})
	}
}
