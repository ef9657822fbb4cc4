// Package apitest is the kit of the tests that talk to the booking API
// over HTTP, shared by sim/api's own tests and sim's (which run it on a
// stage), as pgx keeps its helpers in pgxtest: [Post] sends one booking
// request and reads the whole answer. (The log a test reads while the
// servers write is an internal/syncbuf.Buffer.)
//
// It imports nothing of the API, so that package api's internal tests can
// use it: the callers name the headers (api.HeaderIdempotencyKey, a demo
// user's token).
package apitest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Post sends POST url+"/bookings" with body and the headers given as name,
// value pairs, under t's context, and returns the answer with its whole
// body read (the body closed). A request that cannot be sent or read
// fails t at once.
func Post(t testing.TB, url, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/bookings", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
