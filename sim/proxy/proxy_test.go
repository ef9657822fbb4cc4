package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// upstream is a stand-in API that counts what reaches it: the proxy's
// mechanics are under test here; the checker's runs through it against
// learn's real API and PostgreSQL are in package check.
type upstream struct {
	mu     sync.Mutex
	seen   []string // "METHOD path key body"
	faults []string // each request's HeaderFault
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.seen = append(u.seen, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Idempotency-Key")+" "+string(b))
	u.faults = append(u.faults, r.Header.Get(HeaderFault))
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Seen", "yes")
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, `{"id": "b1"}`)
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.seen)
}

func start(t *testing.T, plan Fault) (*Proxy, string, *upstream) {
	t.Helper()
	up := &upstream{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	p, err := New(srv.URL + "/api")
	if err != nil {
		t.Fatal(err)
	}
	p.Plan = func(*http.Request, []byte) Fault { return plan }
	base, err := p.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, base, up
}

func book(base string) (*http.Response, []byte, error) {
	req, _ := http.NewRequest("POST", base+"/bookings?x=1", strings.NewReader(`{"quantity": 2}`))
	req.Header.Set("Idempotency-Key", "k1")
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// Each fault does what it says to a real connection: the API gets the
// request (twice for a Duplicate), and the client gets the answer, a
// reset, or a cut answer; what happened is kept.
func TestFaults(t *testing.T) {
	t.Run("deliver", func(t *testing.T) {
		p, base, up := start(t, Deliver)
		resp, b, err := book(base)
		if err != nil || resp.StatusCode != 201 || string(b) != `{"id": "b1"}` || resp.Header.Get("X-Seen") != "yes" {
			t.Fatalf("%v %v %s", resp, err, b)
		}
		ps := p.Passages()
		if up.count() != 1 || up.seen[0] != `POST /api/bookings?x=1 k1 {"quantity": 2}` || len(ps) != 1 || !ps[0].Delivered || ps[0].Answers[0].Status != 201 {
			t.Errorf("seen %q, passages %+v", up.seen, ps)
		}
	})
	t.Run("lose the answer", func(t *testing.T) {
		p, base, up := start(t, LoseAnswer)
		if _, _, err := book(base); err == nil || !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "EOF") {
			t.Fatalf("the client got %v, want a reset connection", err)
		}
		ps := p.Passages()
		if up.count() != 1 || len(ps) != 1 || ps[0].Delivered || ps[0].Answers[0].Status != 201 || !bytes.Equal(ps[0].Answers[0].Body, []byte(`{"id": "b1"}`)) {
			t.Errorf("seen %d, passages %+v", up.count(), ps)
		}
	})
	t.Run("cut the headers", func(t *testing.T) {
		_, base, up := start(t, CutHeaders)
		if resp, _, err := book(base); err == nil {
			t.Fatalf("the client read a cut answer as %d", resp.StatusCode)
		}
		if up.count() != 1 {
			t.Errorf("the API saw %d requests, want 1", up.count())
		}
	})
	t.Run("answer 502 in its place", func(t *testing.T) {
		p, base, up := start(t, GatewayError)
		resp, b, err := book(base)
		if err != nil || resp.StatusCode != http.StatusBadGateway || resp.Header.Get("X-Seen") != "" || !strings.Contains(string(b), "502") {
			t.Fatalf("%v %v %s; want the proxy's own 502", resp, err, b)
		}
		if ps := p.Passages(); up.count() != 1 || len(ps) != 1 || ps[0].Delivered || ps[0].Answers[0].Status != 201 {
			t.Errorf("seen %d, passages %+v; want the API's 201 kept and not delivered", up.count(), ps)
		}
	})
	t.Run("crash", func(t *testing.T) {
		// An API that is not learn's harness ignores the header and answers.
		p, base, up := start(t, Crash)
		resp, _, err := book(base)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("%v %v", resp, err)
		}
		if ps := p.Passages(); up.count() != 1 || up.faults[0] != CrashBeforeCommit || len(ps) != 1 || !ps[0].Delivered || ps[0].Header.Get(HeaderFault) != "" {
			t.Errorf("the API saw %q, passages %+v; want the fault asked of the API only", up.faults, ps)
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		p, base, up := start(t, Duplicate)
		resp, _, err := book(base)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("%v %v", resp, err)
		}
		ps := p.Passages()
		if up.count() != 2 || up.seen[0] != up.seen[1] || len(ps[0].Answers) != 2 {
			t.Errorf("seen %q, passages %+v", up.seen, ps)
		}
	})
}

// An API that is down resets the client's connection too, and the passage
// says the API gave no answer.
func TestUpstreamDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, err := New(url)
	if err != nil {
		t.Fatal(err)
	}
	base, err := p.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, _, err := book(base); err == nil {
		t.Fatal("the client got an answer from an API that is down")
	}
	if ps := p.Passages(); len(ps) != 1 || ps[0].Answers[0].Err == nil || ps[0].Delivered {
		t.Errorf("passages %+v", ps)
	}
}

func TestNewRefusesWhatIsNoBaseURL(t *testing.T) {
	for _, u := range []string{"localhost:8080", "ftp://x", "http://", ""} {
		if _, err := New(u); err == nil || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("New(%q) = %v", u, err)
		}
	}
}
