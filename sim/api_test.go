package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
)

// apiReq is one HTTP request to an API instance. In path, body and key,
// {ev} is the test event, {started} an event that has started, {small} an
// event with 1 seat left, and key apiFreshKey a new UUID.
type apiReq struct {
	method string
	path   string
	auth   string // the Authorization header; "" sends none
	key    string // the Idempotency-Key header; "" sends none
	body   string
}

const apiFreshKey = "{fresh}"

const (
	authAda = "Bearer " + api.TokenAda
	authBen = "Bearer " + api.TokenBen
)

// apiStage is a one-instance stage with three events: ev (10 seats, starts
// in a day), started (started an hour ago on the stage clock) and small (1
// seat left).
type apiStage struct {
	*Stage
	ids map[string]int64
}

func newAPIStage(t *testing.T) *apiStage {
	t.Helper()
	st, ev := newStage(t, 10, StageConfig{})
	started, err := st.AddEvent(t.Context(), "Yesterday", 10, st.Clock.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	small, err := st.AddEvent(t.Context(), "Small room", 1, st.Clock.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return &apiStage{Stage: st, ids: map[string]int64{"{ev}": ev, "{started}": started, "{small}": small}}
}

func (s *apiStage) expand(v string) string {
	for name, id := range s.ids {
		v = strings.ReplaceAll(v, name, strconv.FormatInt(id, 10))
	}
	return v
}

// do sends r to the stage's API instance over real HTTP and returns the
// status, the Content-Type and the body.
func (s *apiStage) do(t *testing.T, r apiReq) (status int, contentType string, body []byte) {
	t.Helper()
	status, header, body := s.doH(t, r)
	return status, header.Get("Content-Type"), body
}

// doH is do with the answer's headers.
func (s *apiStage) doH(t *testing.T, r apiReq) (status int, header http.Header, body []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), r.method, s.Instances[0].URL+s.expand(r.path), strings.NewReader(s.expand(r.body)))
	if err != nil {
		t.Fatal(err)
	}
	if r.auth != "" {
		req.Header.Set("Authorization", r.auth)
	}
	switch r.key {
	case "":
	case apiFreshKey:
		req.Header.Set(api.HeaderIdempotencyKey, uuid.NewString())
	default:
		req.Header.Set(api.HeaderIdempotencyKey, r.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// booked is a 200 answer to POST /bookings as the tests read it: the body,
// and whether the header Idempotent-Replayed said it is a replay.
type booked struct {
	api.BookResponse
	Replayed bool
}

// readBooked reads a 200 answer to POST /bookings; ok is false for any
// other status or a body that is not a BookResponse.
func readBooked(status int, header http.Header, body []byte) (b booked, ok bool) {
	if status != http.StatusOK || json.Unmarshal(body, &b.BookResponse) != nil || b.Booking.ID == "" {
		return b, false
	}
	b.Replayed = header.Get(api.HeaderReplayed) == "true"
	return b, true
}

// book sends a booking that must succeed and returns its answer.
func (s *apiStage) book(t *testing.T, auth, key, body string) booked {
	t.Helper()
	status, h, b := s.doH(t, apiReq{method: "POST", path: "/bookings", auth: auth, key: key, body: body})
	res, ok := readBooked(status, h, b)
	if !ok {
		t.Fatalf("booking %s: %d %s", body, status, b)
	}
	return res
}

// tables is what PostgreSQL holds: the booking rows and each event's seats.
func (s *apiStage) tables(t *testing.T) string {
	t.Helper()
	var out string
	err := s.Admin.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM bookings)::text || ' bookings; seats ' ||
		(SELECT string_agg(id || ':' || seats_left, ',' ORDER BY id) FROM events)`).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decodeAPIError reads problem details, refusing anything else.
func decodeAPIError(t *testing.T, body []byte) *api.Error {
	t.Helper()
	e, err := api.ParseProblem(body)
	if err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return e
}

// Every way POST /bookings refuses, through real HTTP to a real API instance
// on PostgreSQL: the status, the error code, a message that says what to do,
// and no row or seat changed.
func TestAPIRefusalsWriteNothing(t *testing.T) {
	s := newAPIStage(t)
	usedKey := uuid.NewString()
	s.book(t, authAda, usedKey, `{"event_id": {ev}, "quantity": 2}`)

	good := `{"event_id": {ev}, "quantity": 2}`
	noDashes := strings.ReplaceAll(uuid.NewString(), "-", "")
	sendWhat := `{"event_id": 1, "quantity": 2}` // what the body messages show
	tests := []struct {
		name   string
		auth   string
		key    string
		body   string
		status int
		code   string
		msg    string // in the message
	}{
		{"unknown event", authAda, apiFreshKey, `{"event_id": 999, "quantity": 2}`, 404, engine.CodeEventNotFound, "GET /events"},

		{"no Idempotency-Key", authAda, "", good, 400, engine.CodeInvalidKey, "Missing Idempotency-Key header"},
		{"blank Idempotency-Key", authAda, "   ", good, 400, engine.CodeInvalidKey, "Missing Idempotency-Key header"},
		{"key abc", authAda, "abc", good, 400, engine.CodeInvalidKey, `"abc" is not a UUID`},
		{"key of 32 hex digits without dashes", authAda, noDashes, good, 400, engine.CodeInvalidKey, "is not a UUID in the form"},
		{"nil UUID", authAda, uuid.Nil.String(), good, 400, engine.CodeInvalidKey, "is the nil UUID, the same for everyone: make a random UUID"},
		{"key in braces", authAda, "{" + uuid.NewString() + "}", good, 400, engine.CodeInvalidKey, "is not a UUID in the form"},
		{"key as a URN", authAda, "urn:uuid:" + uuid.NewString(), good, 400, engine.CodeInvalidKey, "is not a UUID in the form"},

		{"quantity 0", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": 0}`, 400, engine.CodeInvalidQty, "from 1 to 10, got 0"},
		{"quantity -1", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": -1}`, 400, engine.CodeInvalidQty, "from 1 to 10, got -1"},
		{"quantity 11", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": 11}`, 400, engine.CodeInvalidQty, "from 1 to 10, got 11"},

		{"not JSON", authAda, apiFreshKey, `book 2 seats please`, 400, api.CodeInvalidBody, sendWhat},
		{"empty body", authAda, apiFreshKey, ``, 400, api.CodeInvalidBody, sendWhat},
		{"JSON null", authAda, apiFreshKey, `null`, 400, api.CodeInvalidBody, "needs both event_id and quantity"},
		{"an array", authAda, apiFreshKey, `[{"event_id": {ev}, "quantity": 2}]`, 400, api.CodeInvalidBody, sendWhat},
		{"no quantity", authAda, apiFreshKey, `{"event_id": {ev}}`, 400, api.CodeInvalidBody, "needs both event_id and quantity"},
		{"no event_id", authAda, apiFreshKey, `{"quantity": 2}`, 400, api.CodeInvalidBody, "needs both event_id and quantity"},
		{"two JSON objects", authAda, apiFreshKey, good + good, 400, api.CodeInvalidBody, "one JSON object"},
		{"trailing text", authAda, apiFreshKey, good + ` thanks`, 400, api.CodeInvalidBody, "one JSON object"},
		{"a user_id field", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": 2, "user_id": "ben"}`, 400, api.CodeInvalidBody, "the user comes from the Authorization token"},
		{"an unknown field", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": 2, "seats": 2}`, 400, api.CodeInvalidBody, sendWhat},
		{"quantity as a string", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": "2"}`, 400, api.CodeInvalidBody, sendWhat},
		{"quantity 2.5", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": 2.5}`, 400, api.CodeInvalidBody, "quantity 2.5 is not a whole number: send " + sendWhat},
		{"quantity 1e0", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": 1e0}`, 400, api.CodeInvalidBody, "quantity 1e0 must be written without a decimal point or exponent: write it as 1"},
		{"quantity 2.0", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": 2.0}`, 400, api.CodeInvalidBody, "write it as 2"},
		{"event_id 2E0", authAda, apiFreshKey, `{"event_id": 2E0, "quantity": 2}`, 400, api.CodeInvalidBody, "event_id 2E0 must be written without a decimal point or exponent: write it as 2"},
		{"event_id -1", authAda, apiFreshKey, `{"event_id": -1, "quantity": 2}`, 400, api.CodeInvalidBody, "event_id -1 is out of range: event ids are whole numbers from 1"},
		{"event_id 0", authAda, apiFreshKey, `{"event_id": 0, "quantity": 2}`, 400, api.CodeInvalidBody, "event_id 0 is out of range: event ids are whole numbers from 1"},
		{"event_id of 23 digits", authAda, apiFreshKey, `{"event_id": 12345678901234567890123, "quantity": 2}`, 400, api.CodeInvalidBody, "is out of range: event ids are whole numbers from 1"},
		{"event_id as a string", authAda, apiFreshKey, `{"event_id": "{ev}", "quantity": 2}`, 400, api.CodeInvalidBody, sendWhat},
		{"body over 64 KiB", authAda, apiFreshKey, `{"event_id": {ev},` + strings.Repeat(" ", api.MaxBodyBytes) + `"quantity": 2}`, 413, api.CodeBodyTooLarge, "64 KiB"},

		{"no Authorization", "", apiFreshKey, good, 401, engine.CodeUnauthorized, "Authorization: Bearer <token>"},
		{"unknown token", "Bearer tok-eve", apiFreshKey, good, 401, engine.CodeUnauthorized, "learn serve prints the tokens"},
		{"empty bearer token", "Bearer ", apiFreshKey, good, 401, engine.CodeUnauthorized, "Authorization: Bearer <token>"},
		{"basic auth", "Basic YWRhOnNlY3JldA==", apiFreshKey, good, 401, engine.CodeUnauthorized, "Authorization: Bearer <token>"},
		{"no Authorization and no key", "", "", `nonsense`, 401, engine.CodeUnauthorized, "Authorization: Bearer <token>"},

		{"event started", authAda, apiFreshKey, `{"event_id": {started}, "quantity": 2}`, 409, engine.CodeEventStarted, "already started"},
		{"not enough seats", authAda, apiFreshKey, `{"event_id": {small}, "quantity": 2}`, 409, engine.CodeNotEnoughSeats, "Not enough seats left: 1 left, you asked for 2"},
		{"more seats than left", authAda, apiFreshKey, `{"event_id": {ev}, "quantity": 9}`, 409, engine.CodeNotEnoughSeats, engine.NotEnoughSeats(8, 9)},
		{"same key, other quantity", authAda, usedKey, `{"event_id": {ev}, "quantity": 3}`, 409, engine.CodeKeyReused, engine.MsgKeyReused},
		{"same key, other event", authAda, usedKey, `{"event_id": {small}, "quantity": 2}`, 409, engine.CodeKeyReused, engine.MsgKeyReused},
		{"same key, same body, unknown event", authAda, usedKey, `{"event_id": 999, "quantity": 2}`, 404, engine.CodeEventNotFound, "GET /events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.tables(t)
			status, ctype, body := s.do(t, apiReq{method: "POST", path: "/bookings", auth: tt.auth, key: tt.key, body: tt.body})
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if ctype != api.ContentTypeProblem {
				t.Errorf("Content-Type %q, want %s", ctype, api.ContentTypeProblem)
			}
			e := decodeAPIError(t, body)
			if e.Status != tt.status || e.Code != tt.code || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error %+v, want %d %s with %q", e, tt.status, tt.code, tt.msg)
			}
			if after := s.tables(t); after != before {
				t.Errorf("the refusal wrote: before %s, after %s", before, after)
			}
		})
	}
}

// A refused booking stores nothing, so its key books later (lesson: "a
// failed booking stores nothing").
func TestAPIRefusedKeyBooksLater(t *testing.T) {
	s := newAPIStage(t)
	key := uuid.NewString()
	for _, body := range []string{
		`{"event_id": {ev}, "quantity": 11}`,
		`{"event_id": {ev}}`,
		`{"event_id": {started}, "quantity": 2}`,
		`{"event_id": {small}, "quantity": 2}`,
		`{"event_id": 999, "quantity": 2}`,
	} {
		if status, _, b := s.do(t, apiReq{method: "POST", path: "/bookings", auth: authAda, key: key, body: body}); status < 400 {
			t.Fatalf("%s: %d %s, want a refusal", body, status, b)
		}
	}
	res := s.book(t, authAda, key, `{"event_id": {ev}, "quantity": 2}`)
	if res.Replayed || res.Booking.IdempotencyKey != key || res.Booking.Quantity != 2 {
		t.Errorf("after the refusals: %+v", res)
	}
}

// Under expiry=24h, GET /bookings shows a key the sweeper removed as null,
// as the table holds it, and the same key books again; the answers are
// checked against openapi.json like every other.
func TestAnExpiredKeyIsNullAndBooksAgain(t *testing.T) {
	st, _ := newStage(t, 10, StageConfig{KeyExpiry: 24 * time.Hour})
	later, err := st.AddEvent(t.Context(), "Next month", 10, st.Clock.Now().Add(30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	s := &apiStage{Stage: st, ids: map[string]int64{"{later}": later}}
	key := uuid.NewString()
	first := s.book(t, authAda, key, `{"event_id": {later}, "quantity": 2}`)
	st.Clock.(*clock.Fake).Advance(25 * time.Hour)
	if swept, err := st.Sweep(t.Context()); err != nil || len(swept) != 1 {
		t.Fatalf("sweep: %+v, %v", swept, err)
	}
	status, _, body := s.do(t, apiReq{method: "GET", path: "/bookings", auth: authAda})
	var rows []map[string]any
	if err := json.Unmarshal(body, &rows); status != 200 || err != nil || len(rows) != 1 {
		t.Fatalf("GET /bookings: %d %s (%v)", status, body, err)
	}
	if k, ok := rows[0]["idempotency_key"]; !ok || k != nil {
		t.Errorf("the expired key reads %v (present %v), want null: %s", k, ok, body)
	}
	again := s.book(t, authAda, key, `{"event_id": {later}, "quantity": 2}`)
	if again.Replayed || again.Booking.ID == first.Booking.ID {
		t.Errorf("the expired key sent again: %+v, want a new booking", again)
	}
}

// The reads: GET /events, GET /events/{id} and GET /bookings, which lists
// only the caller's bookings.
func TestAPIReads(t *testing.T) {
	s := newAPIStage(t)
	adaKey, benKey := uuid.NewString(), uuid.NewString()
	adas := s.book(t, authAda, adaKey, `{"event_id": {ev}, "quantity": 2}`)
	bens := s.book(t, authBen, benKey, `{"event_id": {ev}, "quantity": 3}`)
	// ben's second booking reuses ada's key: keys are per user.
	bens2 := s.book(t, authBen, adaKey, `{"event_id": {small}, "quantity": 1}`)

	tests := []struct {
		name   string
		req    apiReq
		status int
		code   string // for an error
		check  func(t *testing.T, body []byte)
	}{
		{"events", apiReq{method: "GET", path: "/events"}, 200, "", func(t *testing.T, body []byte) {
			var evs []engine.EventRow
			if err := json.Unmarshal(body, &evs); err != nil {
				t.Fatal(err)
			}
			if len(evs) != 3 || evs[0].Name != "Test night" || evs[0].SeatsLeft != 10-2-3 || evs[2].SeatsLeft != 0 {
				t.Errorf("events %+v", evs)
			}
		}},
		{"one event", apiReq{method: "GET", path: "/events/{ev}"}, 200, "", func(t *testing.T, body []byte) {
			var ev engine.EventRow
			if err := json.Unmarshal(body, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.ID != s.ids["{ev}"] || ev.Name != "Test night" || ev.SeatsLeft != 5 {
				t.Errorf("event %+v", ev)
			}
		}},
		{"unknown event", apiReq{method: "GET", path: "/events/999"}, 404, engine.CodeEventNotFound, nil},
		{"event x", apiReq{method: "GET", path: "/events/x"}, 400, api.CodeInvalidEvent, nil},
		{"event -1", apiReq{method: "GET", path: "/events/-1"}, 400, api.CodeInvalidEvent, nil},
		{"event 0", apiReq{method: "GET", path: "/events/0"}, 400, api.CodeInvalidEvent, nil},
		{"event of 23 digits", apiReq{method: "GET", path: "/events/12345678901234567890123"}, 400, api.CodeInvalidEvent, nil},
		{"bookings without a token", apiReq{method: "GET", path: "/bookings"}, 401, engine.CodeUnauthorized, nil},
		{"unknown path", apiReq{method: "GET", path: "/nope"}, 404, api.CodeNotFound, nil},
		{"DELETE bookings", apiReq{method: "DELETE", path: "/bookings", auth: authAda}, 405, api.CodeBadMethod, nil},
		{"PUT an event", apiReq{method: "PUT", path: "/events/{ev}"}, 405, api.CodeBadMethod, nil},
		{"lower-case bearer", apiReq{method: "GET", path: "/bookings", auth: "bearer tok-ada"}, 200, "", nil},
		{"bookings with an unknown token", apiReq{method: "GET", path: "/bookings", auth: "Bearer tok-eve"}, 401, engine.CodeUnauthorized, nil},
		{"ada's bookings", apiReq{method: "GET", path: "/bookings", auth: authAda}, 200, "", func(t *testing.T, body []byte) {
			var bs []engine.BookingRow
			if err := json.Unmarshal(body, &bs); err != nil {
				t.Fatal(err)
			}
			if len(bs) != 1 || bs[0].ID != adas.Booking.ID || bs[0].UserID != "ada" || bs[0].Key != adaKey {
				t.Errorf("ada sees %+v", bs)
			}
		}},
		{"ben's bookings", apiReq{method: "GET", path: "/bookings", auth: authBen}, 200, "", func(t *testing.T, body []byte) {
			var bs []engine.BookingRow
			if err := json.Unmarshal(body, &bs); err != nil {
				t.Fatal(err)
			}
			if len(bs) != 2 || bs[0].ID != bens.Booking.ID || bs[1].ID != bens2.Booking.ID || bs[0].UserID != "ben" || bs[1].UserID != "ben" {
				t.Errorf("ben sees %+v", bs)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.tables(t)
			status, ctype, body := s.do(t, tt.req)
			want := "application/json"
			if tt.status != http.StatusOK {
				want = api.ContentTypeProblem
			}
			if status != tt.status || ctype != want {
				t.Fatalf("%d %q, want %d %s: %s", status, ctype, tt.status, want, body)
			}
			if tt.code != "" {
				if e := decodeAPIError(t, body); e.Status != tt.status || e.Code != tt.code || e.Message == "" {
					t.Errorf("error %+v, want %d %s", e, tt.status, tt.code)
				}
			}
			if tt.check != nil {
				tt.check(t, body)
			}
			if after := s.tables(t); after != before {
				t.Errorf("a read wrote: before %s, after %s", before, after)
			}
		})
	}
}

// A caller without bookings gets an empty list, not null.
func TestAPINoBookingsIsAnEmptyList(t *testing.T) {
	s := newAPIStage(t)
	status, _, body := s.do(t, apiReq{method: "GET", path: "/bookings", auth: authBen})
	if status != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("%d %s, want 200 []", status, body)
	}
}

// A replay's body is byte for byte the first answer's, apart from the
// replayed flag: the same booking, the same created_at, with a real clock.
func TestAPIReplayBodyEqualsTheFirst(t *testing.T) {
	st, ev := newStage(t, 10, StageConfig{Clock: clock.Real{}})
	key := uuid.NewString()
	post := func() booked {
		t.Helper()
		req, _ := http.NewRequest("POST", st.Instances[0].URL+"/bookings", strings.NewReader(fmt.Sprintf(`{"event_id": %d, "quantity": 2}`, ev)))
		req.Header.Set("Authorization", "Bearer "+api.TokenAda)
		req.Header.Set(api.HeaderIdempotencyKey, key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		br, ok := readBooked(resp.StatusCode, resp.Header, b)
		if !ok {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return br
	}
	first, again := post(), post()
	if first.Replayed || !again.Replayed || first.Booking != again.Booking {
		t.Errorf("first %+v\nreplay %+v", first, again)
	}
}
