package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/internal/syncbuf"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// rawStage is a one-instance stage whose log lines a test can read, for
// requests that net/http's client would not send as they are (two header
// lines of one name, a path that is not clean, a key of a megabyte).
type rawStage struct {
	*apiStage
	logs *syncbuf.Buffer
}

func newRawStage(t *testing.T, cfg StageConfig) *rawStage {
	t.Helper()
	logs := &syncbuf.Buffer{}
	cfg.Log = slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})
	st, ev := newStage(t, 10, cfg)
	return &rawStage{apiStage: &apiStage{Stage: st, ids: map[string]int64{"{ev}": ev}}, logs: logs}
}

// rawAnswer is an answer read off the wire.
type rawAnswer struct {
	status int
	header http.Header
	body   []byte
}

// send writes head (the request line and headers, lines joined by "\r\n",
// without the blank line) and body to a new connection to url, and reads
// one answer.
func sendRaw(t *testing.T, url, head, body string) rawAnswer {
	t.Helper()
	a, err := tryRaw(url, head, body)
	if err != nil {
		t.Fatal(err)
	}
	if method, target, ok := strings.Cut(strings.SplitN(head, "\r\n", 2)[0], " "); ok {
		target, _, _ = strings.Cut(target, " ")
		if _, err := apiCheck.Check(method, target, a.status, a.header, a.body); err != nil {
			t.Errorf("the answer is not as openapi.json says: %v", err)
		}
	}
	return a
}

// tryRaw is sendRaw's exchange, its failure returned: a connection the
// server refused may be reset before its answer is read.
func tryRaw(url, head, body string) (rawAnswer, error) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		return rawAnswer{}, err
	}
	defer conn.Close()
	msg := head + "\r\n"
	if body != "" {
		msg += fmt.Sprintf("Content-Length: %d\r\n", len(body))
	}
	msg += "Connection: close\r\n\r\n" + body
	if _, err := io.WriteString(conn, msg); err != nil {
		return rawAnswer{}, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return rawAnswer{}, fmt.Errorf("no answer to %q: %w", head, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return rawAnswer{}, err
	}
	return rawAnswer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// bookRaw is a POST /bookings of ada's with the header lines given.
func (s *rawStage) bookRaw(t *testing.T, headers []string, body string) rawAnswer {
	t.Helper()
	head := "POST /bookings HTTP/1.1\r\nHost: learn\r\nAuthorization: " + authAda
	for _, h := range headers {
		head += "\r\n" + h
	}
	return sendRaw(t, s.Instances[0].URL, head, s.expand(body))
}

// The Idempotency-Key header as the IETF httpapi draft defines it: an Item
// structured field (RFC 8941) whose value is a String, so the quoted key
// is the same key as the bare one; one header line only; a key longer than
// MaxKeyBytes is refused with the limit in the message, and no answer or
// log line ever carries a long key in full.
func TestAPIIdempotencyKeyHeader(t *testing.T) {
	s := newRawStage(t, StageConfig{})
	good := `{"event_id": {ev}, "quantity": 2}`
	key := uuid.NewString()

	first := s.bookRaw(t, []string{`Idempotency-Key: "` + key + `"`}, good)
	firstRes, ok := readBooked(first.status, first.header, first.body)
	if !ok || firstRes.Replayed || firstRes.Booking.IdempotencyKey != key {
		t.Fatalf("the quoted key: %d %s", first.status, first.body)
	}
	again := s.bookRaw(t, []string{"Idempotency-Key: " + key}, good)
	againRes, ok := readBooked(again.status, again.header, again.body)
	if !ok || !againRes.Replayed || againRes.Booking.ID != firstRes.Booking.ID {
		t.Fatalf("the bare form of the quoted key: %d %s, want a replay of %s", again.status, again.body, firstRes.Booking.ID)
	}
	withParam := s.bookRaw(t, []string{`Idempotency-Key: "` + key + `";v=1`}, good)
	if p, ok := readBooked(withParam.status, withParam.header, withParam.body); !ok || !p.Replayed {
		t.Fatalf("the quoted key with a parameter (ignored, RFC 8941): %d %s", withParam.status, withParam.body)
	}

	long := strings.Repeat("k", api.MaxKeyBytes+1)
	huge := strings.Repeat("x", 1_000_000)
	tests := []struct {
		name    string
		headers []string
		msg     string // in the message
	}{
		{"two header lines", []string{"Idempotency-Key: " + key, "Idempotency-Key: " + key}, "one Idempotency-Key header, not 2"},
		{"two keys on one line", []string{`Idempotency-Key: "` + key + `", "` + uuid.NewString() + `"`}, "not a structured-field string"},
		{"an unterminated string", []string{`Idempotency-Key: "` + key}, "not a structured-field string"},
		{"a quoted key that is not a UUID", []string{`Idempotency-Key: "abc"`}, `"abc" is not a UUID`},
		{"an empty string", []string{`Idempotency-Key: ""`}, "Missing Idempotency-Key"},
		{"a byte sequence", []string{"Idempotency-Key: :YWJj:"}, `":YWJj:" is not a UUID`},
		{"a key one byte over the limit", []string{"Idempotency-Key: " + long}, fmt.Sprintf("%d bytes; the most is %d", api.MaxKeyBytes+1, api.MaxKeyBytes)},
		{"a key of a megabyte", []string{"Idempotency-Key: " + huge}, fmt.Sprintf("1000000 bytes; the most is %d", api.MaxKeyBytes)},
		{"a quoted key of a megabyte", []string{`Idempotency-Key: "` + huge + `"`}, fmt.Sprintf("the most is %d", api.MaxKeyBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.tables(t)
			a := s.bookRaw(t, tt.headers, good)
			if a.status != 400 || a.header.Get("Content-Type") != api.ContentTypeProblem {
				t.Fatalf("%d %s, want 400 problem+json: %.300s", a.status, a.header.Get("Content-Type"), a.body)
			}
			e := decodeAPIError(t, a.body)
			if e.Code != engine.CodeInvalidKey || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error %+v, want %s with %q", e, engine.CodeInvalidKey, tt.msg)
			}
			if len(a.body) > 1024 {
				t.Errorf("a %d-byte answer: a key is never echoed in full", len(a.body))
			}
			if after := s.tables(t); after != before {
				t.Errorf("the refusal wrote: before %s, after %s", before, after)
			}
		})
	}
	// Nor any other long value a client sends: a request id, a path.
	big := strings.Repeat("p", 100_000)
	for _, path := range []string{"/events/" + big, "/" + big} {
		a := sendRaw(t, s.Instances[0].URL, "GET "+path+" HTTP/1.1\r\nHost: learn\r\nX-Request-Id: "+big, "")
		if a.status/100 != 4 || len(a.body) > 1024 {
			t.Errorf("GET of a %d-byte path: %d, a %d-byte answer: %.300s", len(path), a.status, len(a.body), a.body)
		}
	}
	for line := range strings.Lines(s.logs.String()) {
		if len(line) > 1024 || strings.Contains(line, long) {
			t.Errorf("a log line of %d bytes carries a long value: %.200s…", len(line), line)
		}
	}
	if !strings.Contains(s.logs.String(), "key="+key) {
		t.Errorf("the log does not name the UUID key %s in full:\n%s", key, s.logs)
	}
}

// The body of POST /bookings is read strictly: each field once, by its
// exact name, a whole number in range; anything else is 400 with a message
// that names the field, and nothing is written.
func TestAPIStrictBody(t *testing.T) {
	s := newAPIStage(t)
	tests := []struct {
		name string
		body string
		msg  string // in the message
	}{
		{"quantity twice", `{"event_id": {ev}, "quantity": 1, "quantity": 9}`, `"quantity" appears twice`},
		{"event_id twice", `{"event_id": {ev}, "event_id": {ev}, "quantity": 1}`, `"event_id" appears twice`},
		{"Event_ID", `{"Event_ID": {ev}, "quantity": 1}`, `"Event_ID" is not a field: field names are case-sensitive, did you mean "event_id"?`},
		{"QUANTITY", `{"event_id": {ev}, "QUANTITY": 1}`, `did you mean "quantity"?`},
		{"quantity in Unicode's long s", `{"event_id": {ev}, "quantity": 1, "ſeats": 1}`, `"ſeats" is not a field`},
		{"an unknown field", `{"event_id": {ev}, "quantity": 2, "seats": 2}`, `"seats" is not a field: send only event_id and quantity`},
		{"a long unknown field", `{"event_id": {ev}, "quantity": 2, "` + strings.Repeat("s", 5000) + `": 2}`, `(5000 bytes) is not a field`},
		{"quantity past int64", `{"event_id": {ev}, "quantity": 99999999999999999999}`, "quantity 99999999999999999999 is out of range: it must be a whole number from 1 to 10"},
		{"event_id past int64", `{"event_id": 99999999999999999999, "quantity": 1}`, "event_id 99999999999999999999 is out of range"},
		{"a negative event_id past int64", `{"event_id": -99999999999999999999, "quantity": 1}`, "event_id -99999999999999999999 is out of range"},
		{"quantity 1e3", `{"event_id": {ev}, "quantity": 1e3}`, "quantity 1e3 must be written without a decimal point or exponent: write it as 1000"},
		{"quantity 2.0", `{"event_id": {ev}, "quantity": 2.0}`, "quantity 2.0 must be written without a decimal point or exponent: write it as 2"},
		{"quantity 1.5", `{"event_id": {ev}, "quantity": 1.5}`, "quantity 1.5 is not a whole number"},
		{"quantity 1e400", `{"event_id": {ev}, "quantity": 1e400}`, "quantity 1e400 is out of range: it must be a whole number from 1 to 10"},
		{"event_id 1e-400", `{"event_id": 1e-400, "quantity": 1}`, "event_id 1e-400 is not a whole number"},
		{"quantity null", `{"event_id": {ev}, "quantity": null}`, "quantity must be a whole number, not null"},
		{"quantity true", `{"event_id": {ev}, "quantity": true}`, "quantity must be a whole number, not true"},
		{"quantity an object", `{"event_id": {ev}, "quantity": {"n": 2}}`, "quantity must be a whole number, not an object"},
		{"quantity a string", `{"event_id": {ev}, "quantity": "2"}`, "quantity must be a whole number, not a string"},
		{"user_id", `{"event_id": {ev}, "quantity": 2, "user_id": "ben"}`, "the user comes from the Authorization token"},
		{"User_Id", `{"event_id": {ev}, "quantity": 2, "User_Id": "ben"}`, "the user comes from the Authorization token"},
		// Broken JSON is said in words, never in the decoder's own
		// ("unexpected EOF", "invalid character 'ï' looking for…").
		{"cut short", `{"event_id": {ev}, "quantity": `, "The body must be JSON like {\"event_id\": 1, \"quantity\": 2}: it breaks off before its end"},
		{"a byte order mark", "\uFEFF" + `{"event_id": {ev}, "quantity": 2}`, "it starts with a byte order mark (U+FEFF); send UTF-8 without one"},
		{"a stray character", `{"event_id": {ev}, "quantity": 2,, }`, `it is not valid JSON at byte `},
		{"single quotes", `{'event_id': {ev}}`, `it is not valid JSON at byte 2 ("'event_id': …")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.tables(t)
			status, _, body := s.do(t, apiReq{method: "POST", path: "/bookings", auth: authAda, key: apiFreshKey, body: tt.body})
			if status != 400 {
				t.Fatalf("%d, want 400: %.300s", status, body)
			}
			e := decodeAPIError(t, body)
			if e.Code != api.CodeInvalidBody || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error %+v, want %s with %q", e, api.CodeInvalidBody, tt.msg)
			}
			for _, decoders := range []string{"EOF", "looking for", "invalid character"} {
				if strings.Contains(e.Message, decoders) {
					t.Errorf("the decoder's own words %q in %q", decoders, e.Message)
				}
			}
			if len(body) > 1024 {
				t.Errorf("a %d-byte answer", len(body))
			}
			if after := s.tables(t); after != before {
				t.Errorf("the refusal wrote: before %s, after %s", before, after)
			}
		})
	}
}

// A body over the limit is 413 from the API instance itself, however it
// comes (a Content-Length over the limit, or chunks that add up past it),
// and the log says 413.
func TestAPIBodyTooLarge(t *testing.T) {
	s := newRawStage(t, StageConfig{})
	good := s.expand(`{"event_id": {ev}, "quantity": 2}`)
	atLimit := good[:len(good)-1] + strings.Repeat(" ", api.MaxBodyBytes-len(good)) + "}"
	if a := s.bookRaw(t, []string{"Idempotency-Key: " + uuid.NewString()}, atLimit); a.status != 200 {
		t.Errorf("a body of exactly %d bytes: %d %.300s", len(atLimit), a.status, a.body)
	}
	over := atLimit + " "
	for _, tt := range []struct {
		name string
		body io.Reader
		size int64 // -1: chunked
	}{
		{"over, with a Content-Length", strings.NewReader(over), int64(len(over))},
		{"over, chunked", io.MultiReader(strings.NewReader(over[:10]), strings.NewReader(over[10:])), -1},
		{"50 MB", io.LimitReader(zeros{}, 50<<20), 50 << 20},
		{"50 MB, chunked", io.LimitReader(zeros{}, 50<<20), -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := s.logs.String()
			req, err := http.NewRequestWithContext(t.Context(), "POST", s.Instances[0].URL+"/bookings", tt.body)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = tt.size
			req.Header.Set("Authorization", authAda)
			req.Header.Set(api.HeaderIdempotencyKey, uuid.NewString())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 {
				t.Fatalf("%d, want 413: %.300s", resp.StatusCode, b)
			}
			if e := decodeAPIError(t, b); e.Code != api.CodeBodyTooLarge || !strings.Contains(e.Message, "64 KiB") {
				t.Errorf("error %+v", e)
			}
			if logged := strings.TrimPrefix(s.logs.String(), before); !strings.Contains(logged, `msg="POST /bookings" instance=api-1 status=413`) {
				t.Errorf("the log does not say 413:\n%s", logged)
			}
		})
	}
}

// zeros reads as endless '0' bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// Every answer of an API instance is JSON: a path that is not clean is 404
// there and then (net/http's mux would answer with an HTML 307 to the
// cleaned path), and so is OPTIONS *.
func TestAPIEveryAnswerIsJSON(t *testing.T) {
	s := newRawStage(t, StageConfig{})
	for _, tt := range []struct {
		request string
		status  int
	}{
		{"GET /../../etc/passwd", 404},
		{"GET /events/../../etc/passwd", 404},
		{"GET //events", 404},
		{"GET /./events", 404},
		{"GET /events/", 404},
		{"GET /events/%2e%2e/bookings", 404},
		{"POST /bookings/../bookings", 404},
		{"OPTIONS *", 404},
		{"GET /events/1/", 404},
		{"DELETE /events", 405},
		{"GET /", 404},
	} {
		t.Run(tt.request, func(t *testing.T) {
			a := sendRaw(t, s.Instances[0].URL, tt.request+" HTTP/1.1\r\nHost: learn\r\nAuthorization: "+authAda, "")
			if a.status != tt.status || a.header.Get("Content-Type") != api.ContentTypeProblem || a.header.Get("Location") != "" {
				t.Fatalf("%d %q (Location %q), want %d problem+json: %.300s", a.status, a.header.Get("Content-Type"), a.header.Get("Location"), tt.status, a.body)
			}
			if e := decodeAPIError(t, a.body); e.Status != tt.status || e.Message == "" {
				t.Errorf("error %+v", e)
			}
		})
	}
}

// The requests net/http refuses by itself, before any handler runs (a
// header with a control character or a malformed line, a missing or a
// second Host, two Content-Lengths, an unknown transfer coding or
// protocol version, an Expect other than 100-continue, headers over the
// limit), are answered in JSON too, on an API instance and on the front
// door alike, also after a first request on the same connection; the
// connection is closed after the answer, as net/http closes it.
func TestNetHTTPRefusalsAreJSON(t *testing.T) {
	s := newRawStage(t, StageConfig{Limits: api.ServeLimits{MaxHeaderBytes: 8 << 10}})
	front, err := api.NewFrontDoor(s.Instances, slog.New(slog.DiscardHandler), api.ServeLimits{MaxHeaderBytes: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := front.Serve(ln)
	defer hs.Close()
	const ok = "GET /events HTTP/1.1\r\nHost: learn\r\n\r\n"
	for _, tt := range []struct {
		name, request string
		status        int
		code          string
	}{
		{"a control character in a header", "GET /events HTTP/1.1\r\nHost: learn\r\nX-A: a\x01b\r\n\r\n", 400, api.CodeBadRequest},
		{"a header line without a colon", "GET /events HTTP/1.1\r\nHost: learn\r\nno colon here\r\n\r\n", 400, api.CodeBadRequest},
		{"no Host", "GET /events HTTP/1.1\r\n\r\n", 400, api.CodeBadRequest},
		{"two Hosts", "GET /events HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, api.CodeBadRequest},
		{"two Content-Lengths", "POST /bookings HTTP/1.1\r\nHost: learn\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx", 400, api.CodeBadRequest},
		{"a transfer coding", "POST /bookings HTTP/1.1\r\nHost: learn\r\nTransfer-Encoding: gzip\r\n\r\n", 501, api.CodeTransferEncoding},
		{"HTTP/9.9", "GET /events HTTP/9.9\r\nHost: learn\r\n\r\n", 505, api.CodeHTTPVersion},
		{"Expect: 200-ok", "GET /events HTTP/1.1\r\nHost: learn\r\nExpect: 200-ok\r\n\r\n", 417, api.CodeExpectationUnsupported},
		{"headers over the limit", "GET /events HTTP/1.1\r\nHost: learn\r\nX-Big: " + strings.Repeat("b", 20<<10) + "\r\n\r\n", 431, api.CodeHeadersTooLarge},
		{"a control character after a first request", ok + "GET /events HTTP/1.1\r\nHost: learn\r\nX-A: a\x7fb\r\n\r\n", 400, api.CodeBadRequest},
	} {
		for _, where := range []struct{ name, url string }{{"api-1", s.Instances[0].URL}, {"front door", "http://" + ln.Addr().String()}} {
			t.Run(tt.name+"/"+where.name, func(t *testing.T) {
				c := dial(t, where.url)
				if _, err := io.WriteString(c, tt.request); err != nil {
					t.Fatal(err)
				}
				br := bufio.NewReader(bytes.NewReader(waitClosed(t, c)))
				if strings.HasPrefix(tt.request, ok) {
					first, err := http.ReadResponse(br, nil)
					if err != nil || first.StatusCode != 200 {
						t.Fatalf("the first request: %v %v", first, err)
					}
					io.Copy(io.Discard, first.Body)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != api.ContentTypeProblem {
					t.Fatalf("%d %q %q, want %d in JSON", resp.StatusCode, resp.Header.Get("Content-Type"), body, tt.status)
				}
				if e := decodeAPIError(t, body); e.Status != tt.status || e.Code != tt.code || e.Message == "" {
					t.Errorf("error %+v, want %d %s", e, tt.status, tt.code)
				}
			})
		}
	}
}

// A body sent with a content coding is refused with 415 and nothing is
// booked (it used to be read as plain JSON, whatever its coding said);
// identity, the absence of coding, is plain JSON.
func TestAPIContentEncodingIsRefused(t *testing.T) {
	s := newRawStage(t, StageConfig{})
	good := `{"event_id": {ev}, "quantity": 2}`
	for _, coding := range []string{"gzip", "br", "GZIP", "deflate, gzip"} {
		a := s.bookRaw(t, []string{"Idempotency-Key: " + uuid.NewString(), "Content-Encoding: " + coding}, good)
		if a.status != http.StatusUnsupportedMediaType {
			t.Fatalf("Content-Encoding %s: %d %s, want 415", coding, a.status, a.body)
		}
		if e := decodeAPIError(t, a.body); e.Code != api.CodeBodyEncoding || !strings.Contains(e.Message, coding) {
			t.Errorf("Content-Encoding %s: %+v", coding, e)
		}
	}
	if got := s.tables(t); !strings.HasPrefix(got, "0 bookings") {
		t.Errorf("tables %s, want no booking", got)
	}
	if a := s.bookRaw(t, []string{"Idempotency-Key: " + uuid.NewString(), "Content-Encoding: identity"}, good); a.status != 200 {
		t.Errorf("Content-Encoding identity: %d %s, want 200", a.status, a.body)
	}
}
