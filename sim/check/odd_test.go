package check

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// oddConfig is a config of the API at base with one event and no way to
// read back what it stored.
func oddConfig(t *testing.T, base string) *Config {
	t.Helper()
	c, err := Parse([]byte(fmt.Sprintf(`
urls = [%q]
[request]
path = "/bookings"
body = '{"event_id": {event}, "quantity": {quantity}}'
[[users]]
name = "ada"
headers = { Authorization = "Bearer tok-ada" }
[[users]]
name = "ben"
headers = { Authorization = "Bearer tok-ben" }
[answer]
booking_id = "/booking/id"
[event]
id = 1
`, base)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An API that does not book, whatever it answers (a 404, a booked status
// with no id where the config points, an answer over 4 MiB, none within
// the try's time), is no pass: the row is an error that says what came
// back, and the check fails; when it never answered, the rows after the
// first are not run.
func TestAnAPIThatDoesNotBookIsAnError(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
		timeout time.Duration // a try's time: short only where no answer ever comes
	}{
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "the API answered 404 to POST /bookings, neither booked", time.Minute},
		{"no id", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(201)
			io.WriteString(w, `{"booking": {"idd": 7}}`)
		}, "the API answered 201, a booked status, with no booking id at /booking/id", time.Minute},
		{"5 MiB", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(201)
			io.WriteString(w, `{"booking": {"id": "`+strings.Repeat("x", 5<<20)+`"}}`)
		}, "got no answer from the API: the API's answer is over 4 MiB", time.Minute},
		{"hang", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // then the server sees the proxy leave
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}, "no answer from the API to any try within 200ms", 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			res, err := Run(t.Context(), oddConfig(t, srv.URL), Options{Only: []string{"lost-answer", "different-quantity"}, Timeout: tc.timeout, Backoff: []time.Duration{0, 0}})
			if err != nil {
				t.Fatal(err)
			}
			first := res.Rows[0]
			if first.State != Error || !strings.Contains(first.Says, tc.want) || res.Failed != 2 || len(first.Says) > 400 {
				t.Errorf("%s: %q; %d failed\nwant an error with %q", first.State, first.Says, res.Failed, tc.want)
			}
		})
	}
}

// A hung try is one that got no answer: the check's client retries it,
// as the lesson's rule retries a lost answer (the judge would otherwise
// blame the client for giving up).
func TestATryThatTimedOutIsRetried(t *testing.T) {
	var tries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if tries.Add(1) == 1 {
			<-r.Context().Done()
			return
		}
		w.WriteHeader(201)
		io.WriteString(w, `{"booking": {"id": "b1"}}`)
	}))
	defer srv.Close()
	res, err := Run(t.Context(), oddConfig(t, srv.URL), Options{Only: []string{"lost-answer"}, Timeout: 2 * time.Second, Backoff: []time.Duration{0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	row := res.Rows[0]
	var got []string
	for _, a := range row.Judged.Attempts {
		for _, tr := range a.Tries {
			got = append(got, fmt.Sprint(tr.Status))
		}
	}
	if len(got) < 2 || got[len(got)-1] != "201" || row.State == Fail {
		t.Errorf("tries %v, row %s %q; want the timed-out try retried to its 201", got, row.State, row.Says)
	}
}
