package client

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
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer server.Close()
	browser := &http.Client{Transport: &Network{Plan: func(trace.Attempt) Fault { return LoseAnswer }}}
	resp, err := browser.Post(server.URL, "application/json", strings.NewReader(`{}`))
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
