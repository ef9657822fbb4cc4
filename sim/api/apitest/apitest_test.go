package apitest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Post sends every header pair it is given to POST /bookings with the
// body, and hands back the answer with its body read.
func TestPostSendsTheHeadersAndReadsTheAnswer(t *testing.T) {
	var got *http.Request
	var gotBody string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		b := make([]byte, 64)
		n, _ := r.Body.Read(b)
		gotBody = string(b[:n])
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"error":"x"}`))
	}))
	defer ts.Close()
	resp, b := Post(t, ts.URL, `{"quantity": 2}`, "Authorization", "Bearer t", "Idempotency-Key", "k-1")
	if got.Method != http.MethodPost || got.URL.Path != "/bookings" || got.Header.Get("Authorization") != "Bearer t" || got.Header.Get("Idempotency-Key") != "k-1" || gotBody != `{"quantity": 2}` {
		t.Errorf("the server got %s %s %v %q", got.Method, got.URL.Path, got.Header, gotBody)
	}
	if resp.StatusCode != http.StatusConflict || string(b) != `{"error":"x"}` {
		t.Errorf("answer %d %q", resp.StatusCode, b)
	}
}
