package sim

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// dial opens a connection to an instance's URL.
func dial(t *testing.T, url string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitClosed reads c until the server closes it and returns what came
// before the end; a reset counts as closed.
func waitClosed(t *testing.T, c net.Conn) []byte {
	t.Helper()
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("reading until the server closes the connection: %v", err)
	}
	return b
}

// Each limit of a listener cuts the client that goes past it, and the
// client sees its connection closed: a request's headers that stop
// coming (no answer), a body that stops coming (408, JSON), a kept-alive
// connection left idle, and an answer that cannot be written in time.
func TestListenerLimitsCutSlowClients(t *testing.T) {
	// Short limits so the test is quick; the test waits for the server to
	// close each connection, never for a while of its own.
	limits := api.ServeLimits{ReadHeader: 500 * time.Millisecond, Read: 500 * time.Millisecond, Idle: 500 * time.Millisecond, MaxHeaderBytes: 8 << 10}
	s := newRawStage(t, StageConfig{Limits: limits})
	url := s.Instances[0].URL

	t.Run("headers that stop", func(t *testing.T) {
		c := dial(t, url)
		if _, err := io.WriteString(c, "GET /events HTTP/1.1\r\nHost: le"); err != nil {
			t.Fatal(err)
		}
		if got := waitClosed(t, c); len(got) != 0 {
			t.Errorf("an answer to half a request: %q", got)
		}
	})

	t.Run("a body that stops", func(t *testing.T) {
		c := dial(t, url)
		if _, err := io.WriteString(c, "POST /bookings HTTP/1.1\r\nHost: learn\r\nAuthorization: "+authAda+
			"\r\nIdempotency-Key: 7d9f2c4e-1b3a-4c5d-9e8f-0a1b2c3d4e5f\r\nContent-Length: 100\r\n\r\n{\"event_id\": "); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer to a body that stopped: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || decodeAPIError(t, b).Code != api.CodeRequestTimeout {
			t.Errorf("%d %s, want 408 %s", resp.StatusCode, b, api.CodeRequestTimeout)
		}
		if rest, _ := io.ReadAll(br); len(rest) != 0 {
			t.Errorf("more after the 408: %q", rest)
		}
	})

	t.Run("an idle connection", func(t *testing.T) {
		c := dial(t, url)
		if _, err := io.WriteString(c, "GET /events HTTP/1.1\r\nHost: learn\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Close {
			t.Fatalf("%d, close %v: want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
		}
		if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
			t.Errorf("the idle connection ended with %q, %v", rest, err)
		}
	})

	t.Run("headers over the limit", func(t *testing.T) {
		// A key over MaxKeyBytes but within the header limit is the API's
		// JSON 400; a header section over the limit is net/http's 431 (in JSON).
		if a := sendRaw(t, url, "GET /events HTTP/1.1\r\nHost: learn\r\nIdempotency-Key: "+strings.Repeat("k", 1000), ""); a.status != 200 {
			t.Errorf("1000 bytes of headers: %d", a.status)
		}
		a := s.bookRaw(t, []string{"Idempotency-Key: " + strings.Repeat("k", 4000)}, `{"event_id": {ev}, "quantity": 1}`)
		if a.status != 400 || decodeAPIError(t, a.body).Code != engine.CodeInvalidKey {
			t.Errorf("a 4000-byte key: %d %s", a.status, a.body)
		}
		c := dial(t, url)
		if _, err := io.WriteString(c, "GET /events HTTP/1.1\r\nHost: learn\r\nX-Big: "+strings.Repeat("b", 20<<10)+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if got := waitClosed(t, c); !strings.HasPrefix(string(got), "HTTP/1.1 431 ") {
			t.Errorf("20 KiB of headers: %.100q", got)
		}
	})

	t.Run("an answer not written in time", func(t *testing.T) {
		// Any answer takes longer than a nanosecond to write.
		in, err := api.StartInstance("api-9", "127.0.0.1:0", s.Instances[0].API, api.ServeLimits{Write: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		c := dial(t, in.URL)
		if _, err := io.WriteString(c, "GET /events HTTP/1.1\r\nHost: learn\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if got := waitClosed(t, c); len(got) != 0 {
			t.Errorf("an answer past the write limit: %q", got)
		}
	})
}

// A listener holds at most MaxConns connections: one more gets a JSON 503
// with Retry-After and is closed; when one closes, the next is served.
func TestListenerCapsConnections(t *testing.T) {
	s := newRawStage(t, StageConfig{Limits: api.ServeLimits{MaxConns: 2}})
	url := s.Instances[0].URL
	first, _ := dial(t, url), dial(t, url) // both accepted before the third, in the order they came

	a := sendRaw(t, url, "GET /events HTTP/1.1\r\nHost: learn", "")
	if a.status != 503 || a.header.Get("Retry-After") != api.RetryAfter || a.header.Get("Content-Type") != api.ContentTypeProblem {
		t.Fatalf("the third connection: %d %v %s", a.status, a.header, a.body)
	}
	if e := decodeAPIError(t, a.body); e.Code != api.CodeTooManyConnections || !strings.Contains(e.Message, "at most 2 connections at once, from all clients together") {
		t.Errorf("error %+v", e)
	}
	if !strings.Contains(s.logs.String(), `level=WARN msg="2 connections open, the most allowed: refusing new ones with 503" instance=api-1 refused=1`) {
		t.Errorf("the log does not say so:\n%s", s.logs)
	}

	first.Close()
	for { // until the server has seen the first connection close
		// A refused connection whose request came after the refusal's
		// linger (a loaded machine) is reset: still refused, try again.
		a, err := tryRaw(url, "GET /events HTTP/1.1\r\nHost: learn", "")
		switch {
		case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
			continue
		case err != nil:
			t.Fatal(err)
		case a.status == 200:
			return
		case a.status != 503:
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
}

// A scenario's stage has no limit of time: a request held at a gated step
// (here until the test closes a channel) keeps waiting, with its database
// connection and its row lock, while the same step on a stage with short
// ServeLimits is cut, a client of that stage is cut, and a read there
// gives up waiting for a connection; a read queued behind the held step on
// the scenario's stage waits for it and is answered.
func TestScenarioStageHoldsARequestPastEveryLimit(t *testing.T) {
	limits := api.ServeLimits{ReadHeader: 200 * time.Millisecond, Read: 200 * time.Millisecond, Write: 200 * time.Millisecond,
		Idle: 200 * time.Millisecond, MaxConns: 8, DBWait: 100 * time.Millisecond, LockWait: 100 * time.Millisecond}
	scenario := newRawStage(t, StageConfig{MaxConns: 1})
	serve := newRawStage(t, StageConfig{MaxConns: 1, Limits: limits})
	release := make(chan struct{})
	heldScenario := holdAt(scenario.Instances[0], engine.PointAfterLookup, release)
	heldServe := holdAt(serve.Instances[0], engine.PointAfterLookup, release)
	body := `{"event_id": {ev}, "quantity": 2}`
	onScenario := sendAsync(t.Context(), scenario.Instances[0].URL, "POST", "/bookings", uuid.NewString(), scenario.expand(body))
	onServe := sendAsync(t.Context(), serve.Instances[0].URL, "POST", "/bookings", uuid.NewString(), serve.expand(body))
	<-heldScenario
	<-heldServe

	// Both steps are held. On the limited stage, a read gives up waiting
	// for the one connection, and a client that sends nothing is cut.
	must503(t, "GET /events on the limited stage", <-sendAsync(t.Context(), serve.Instances[0].URL, "GET", "/events", "", ""), api.CodeDatabaseBusy)
	if got := waitClosed(t, dial(t, serve.Instances[0].URL)); len(got) != 0 {
		t.Errorf("an answer to nothing: %q", got)
	}
	// On the scenario's stage, a read waits for the held step.
	queued := sendAsync(t.Context(), scenario.Instances[0].URL, "GET", "/events", "", "")

	close(release)
	must200(t, "the step held on the scenario's stage", <-onScenario, false)
	if a := <-queued; a.err != nil || a.status != 200 {
		t.Errorf("the read queued behind it: %d %v %s", a.status, a.err, a.body)
	}
	if a := <-onServe; a.err == nil {
		t.Errorf("the step held past the write limit was answered: %d %s", a.status, a.body)
	}
}
