package api

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/internal/syncbuf"
	"github.com/learn-idempotency/learn/sim/api/apitest"
)

// seen is what a stand-in API instance received.
type seen struct {
	instance string
	auth     string
	key      string
	body     string
}

// standIn is an HTTP server that records each request and answers 200 with
// its name in X-Learn-Instance, as an API instance does.
func standIn(t *testing.T, name string, got chan<- seen) *Instance {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{instance: name, auth: r.Header.Get("Authorization"), key: r.Header.Get(HeaderIdempotencyKey), body: string(b)}
		w.Header().Set(HeaderInstance, name)
		writeJSON(w, http.StatusOK, map[string]string{"from": name})
	}))
	t.Cleanup(ts.Close)
	return &Instance{Name: name, URL: ts.URL}
}

// post sends POST /bookings as ada with key and body, and reads the answer.
func post(t *testing.T, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	return apitest.Post(t, url, body, "Authorization", authAda, HeaderIdempotencyKey, key)
}

// The front door takes the instances in turn, passes the headers and the
// body on as they came, keeps the instance's X-Learn-Instance, and logs
// where each request went.
func TestFrontDoorRoundRobin(t *testing.T) {
	got := make(chan seen, 8)
	ins := []*Instance{standIn(t, "api-1", got), standIn(t, "api-2", got), standIn(t, "api-3", got)}
	var logs syncbuf.Buffer
	f, err := NewFrontDoor(ins, slog.New(slog.NewTextHandler(&logs, nil)), ServeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(f)
	defer front.Close()

	key := uuid.NewString()
	for i, want := range []string{"api-1", "api-2", "api-3", "api-1"} {
		body := fmt.Sprintf(`{"event_id": 1, "quantity": %d}`, i+1)
		resp, _ := post(t, front.URL, key, body)
		s := <-got
		if resp.StatusCode != 200 || s.instance != want || resp.Header.Get(HeaderInstance) != want {
			t.Errorf("request %d: %d from %q (header %q), want 200 from %s", i+1, resp.StatusCode, s.instance, resp.Header.Get(HeaderInstance), want)
		}
		if s.auth != authAda || s.key != key || s.body != body {
			t.Errorf("request %d reached %s as %+v", i+1, s.instance, s)
		}
	}
	front.Close() // every request is answered and logged
	out := logs.String()
	for _, want := range []string{`msg="POST /bookings → api-1" instance=front-door status=200 to=api-1`, `msg="POST /bookings → api-3"`, "to=api-2", "key=" + key} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}

// decodeError reads problem details, refusing any other shape.
func decodeError(t *testing.T, b []byte) *Error {
	t.Helper()
	e, err := ParseProblem(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return e
}

// An instance that gives no answer is a 502 in the API's error shape, which
// says to retry with the same key; a body over the API's limit is a 413.
func TestFrontDoorOwnAnswers(t *testing.T) {
	got := make(chan seen, 8)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // nothing listens there any more
	ins := []*Instance{{Name: "api-1", URL: deadURL}, standIn(t, "api-2", got)}
	var logs syncbuf.Buffer
	f, err := NewFrontDoor(ins, slog.New(slog.NewTextHandler(&logs, nil)), ServeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(f)
	defer front.Close()

	resp, b := post(t, front.URL, uuid.NewString(), `{"event_id": 1, "quantity": 2}`)
	e := decodeError(t, b)
	if resp.StatusCode != 502 || resp.Header.Get("Content-Type") != ContentTypeProblem ||
		e.Status != 502 || e.Code != CodeBadGateway || !strings.Contains(e.Message, "API instance api-1 gave no answer") ||
		!strings.Contains(e.Message, "retry with the same idempotency key") {
		t.Errorf("dead instance: %d %+v", resp.StatusCode, e)
	}
	if out := logs.String(); !strings.Contains(out, `level=ERROR msg="no answer from the API instance" instance=front-door to=api-1`) {
		t.Errorf("the log lacks the 502:\n%s", out)
	}

	// A body over the limit, however it comes, is refused at the door:
	// no instance sees it, and the log says 413.
	for _, size := range []int64{MaxBodyBytes + 1, 50 << 20, -1} {
		req, err := http.NewRequestWithContext(t.Context(), "POST", front.URL+"/bookings", io.LimitReader(zeros{}, max(size, 50<<20)))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = size // -1: chunked, 50 MB
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if e := decodeError(t, b); resp.StatusCode != 413 || e.Status != 413 || e.Code != CodeBodyTooLarge || !strings.Contains(e.Message, "64 KiB") {
			t.Errorf("a body of %d bytes: %d %+v", size, resp.StatusCode, e)
		}
	}
	front.Close() // every request is answered and logged
	if n := strings.Count(logs.String(), `level=INFO msg="POST /bookings" instance=front-door status=413`); n != 3 {
		t.Errorf("%d log lines say 413, want 3:\n%s", n, logs.String())
	}
	if len(got) != 0 {
		t.Errorf("an instance got a body over the limit: %+v", <-got)
	}
}

// The front door reads a request's whole body before it picks an
// instance: a client that sends its body slowly holds no connection to an
// instance (one file descriptor, not three), and another request is passed
// on meanwhile over the one connection there is.
func TestFrontDoorReadsTheBodyFirst(t *testing.T) {
	var mu sync.Mutex
	conns := 0 // connections the instance has accepted
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set(HeaderInstance, "api-1")
		writeJSON(w, http.StatusOK, map[string]string{"body": string(b)})
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	f, err := NewFrontDoor([]*Instance{{Name: "api-1", URL: ts.URL}}, slog.New(slog.DiscardHandler), ServeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(f)
	t.Cleanup(front.Close) // after the slow connection's own cleanup

	slow := dial(t, front.URL)
	body := `{"event_id": 1, "quantity": 2}`
	if _, err := fmt.Fprintf(slow, "POST /bookings HTTP/1.1\r\nHost: learn\r\nAuthorization: %s\r\nContent-Length: %d\r\n\r\n%s",
		authAda, len(body), body[:10]); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if resp, b := post(t, front.URL, uuid.NewString(), body); resp.StatusCode != 200 || !strings.Contains(string(b), `quantity`) {
			t.Fatalf("another request: %d %s", resp.StatusCode, b)
		}
	}
	mu.Lock()
	n := conns
	mu.Unlock()
	if n != 1 {
		t.Errorf("the instance accepted %d connections while a body was slow to come, want the 1 the other requests share", n)
	}
	if _, err := io.WriteString(slow, body[10:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(slow), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the slow request: %v %v", resp, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `quantity`) {
		t.Errorf("the slow request reached the instance as %s", b)
	}
}

// Served with limits, the front door answers a body that stops coming
// with 408, and an instance that does not answer within half the write
// limit with 504 gateway_timeout; both in the log.
func TestFrontDoorLimits(t *testing.T) {
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // then net/http watches the connection
		<-r.Context().Done()      // until the front door gives up
	}))
	defer stuck.Close()
	var logs syncbuf.Buffer
	f, err := NewFrontDoor([]*Instance{{Name: "api-1", URL: stuck.URL}}, slog.New(slog.NewTextHandler(&logs, nil)),
		ServeLimits{Read: 300 * time.Millisecond, Write: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := f.Serve(ln)
	url := "http://" + srv.Addr().String()

	c := dial(t, url)
	if _, err := io.WriteString(c, "POST /bookings HTTP/1.1\r\nHost: learn\r\nContent-Length: 100\r\n\r\n{\"event_id\""); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if e := decodeError(t, b); resp.StatusCode != 408 || e.Code != CodeRequestTimeout {
		t.Errorf("a body that stopped: %d %+v", resp.StatusCode, e)
	}

	r, b := post(t, url, uuid.NewString(), `{"event_id": 1, "quantity": 2}`)
	if e := decodeError(t, b); r.StatusCode != 504 || e.Code != CodeGatewayTimeout || !strings.Contains(e.Message, "within 200ms") {
		t.Errorf("an instance that does not answer: %d %+v", r.StatusCode, e)
	}
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`msg="POST /bookings" instance=front-door status=408`,
		`level=ERROR msg="no answer from the API instance" instance=front-door to=api-1 err="context deadline exceeded"`,
		`msg="POST /bookings → api-1" instance=front-door status=504`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestFrontDoorRefusesBadInstances(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	if _, err := NewFrontDoor(nil, log, ServeLimits{}); err == nil {
		t.Error("no instances: no error")
	}
	if _, err := NewFrontDoor([]*Instance{{Name: "api-1", URL: "127.0.0.1:8080"}}, log, ServeLimits{}); err == nil || !strings.Contains(err.Error(), "api-1") {
		t.Errorf("URL without a scheme: %v", err)
	}
}

// authAda is the Authorization header of the demo user ada.
const authAda = "Bearer " + TokenAda

// dial opens a TCP connection to the server at url (http://host:port),
// closed when t ends.
func dial(t *testing.T, url string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// zeros reads as endless '0' bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}
