package sim

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/learn-idempotency/learn/sim/trace"
)

// An answer dropped by learn's lossy network reads as what it is: learn's
// network dropped it after the API had acted, standing in for a connection
// reset (the browser cannot tell either apart). Before, it read
// "connection reset: ...", as if a real connection had been reset.
func TestLostAnswerSaysLearnsNetworkDroppedIt(t *testing.T) {
	var served atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer api.Close()
	browser := &http.Client{Transport: &Network{Plan: func(trace.Attempt) Fault { return LoseAnswer }}}
	resp, err := browser.Post(api.URL, "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the answer arrived: %d", resp.StatusCode)
	}
	if !errors.Is(err, ErrAnswerLost) {
		t.Fatalf("err = %v, want ErrAnswerLost", err)
	}
	if served.Load() != 1 {
		t.Errorf("the API ran %d times, want 1: the answer is lost after the API acted", served.Load())
	}
	msg := ErrAnswerLost.Error()
	for _, want := range []string{"learn's lossy network dropped the answer", "stands in for a connection reset"} {
		if !strings.Contains(msg, want) {
			t.Errorf("ErrAnswerLost says %q: it does not say %q", msg, want)
		}
	}
	if strings.HasPrefix(msg, "connection reset") {
		t.Errorf("ErrAnswerLost says %q: a reset learn did not see", msg)
	}
}

// The 408 a slow request gets says what is true of this API and its
// client: nothing was stored; learn's client treats a 4xx as final
// (ShouldRetry), so it does not send it again; a person may send the
// booking again with the same idempotency key. Before, it told the client
// to send it again, which the lesson's client never does for a 4xx.
func TestRequestTimeoutSaysTheClientDoesNotRetryIt(t *testing.T) {
	e := errRequestTimeout()
	if e.Status != http.StatusRequestTimeout || e.Code != CodeRequestTimeout {
		t.Fatalf("errRequestTimeout() = %+v", e)
	}
	if ShouldRetry(e.Status, nil) {
		t.Fatalf("ShouldRetry(%d) = true: the client retries a 4xx, and the message below is wrong", e.Status)
	}
	for _, want := range []string{"nothing was stored", "learn's client treats a 4xx as final", "send the booking again", "same idempotency key"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the 408 says %q: it does not say %q", e.Message, want)
		}
	}
}
