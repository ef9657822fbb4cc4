package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

func TestShouldRetry(t *testing.T) {
	tests := []struct {
		status int
		code   string
		err    error
		want   bool
		byCode bool // RetryByStatus differs: it reads the status alone
	}{
		{0, "", ErrAnswerLost, true, false},
		{0, "", ErrNotSent, true, false},
		{0, "", fmt.Errorf("post: %w", ErrAnswerLost), true, false},
		{0, "", context.Canceled, false, false},
		{0, "", context.DeadlineExceeded, false, false},
		{500, "", nil, true, false},
		{502, "", nil, true, false},
		{503, "", nil, true, false},
		{200, "", nil, false, false},
		{400, "", nil, false, false},
		{401, "", nil, false, false},
		{404, "", nil, false, false},
		{408, "", nil, false, false}, // the API's 408 says so (api.errRequestTimeout)
		{409, "", nil, false, false},
		{409, engine.CodeKeyReused, nil, false, false},
		{409, engine.CodeNotEnoughSeats, nil, false, false},
		{409, engine.CodeInProgress, nil, true, true},   // not final: the first request is still running
		{422, engine.CodeInProgress, nil, false, false}, // the code means it with 409 only
		{0, engine.CodeInProgress, ErrAnswerLost, true, false},
		{422, "", nil, false, false},
	}
	for _, tt := range tests {
		if got := ShouldRetry(tt.status, tt.code, tt.err); got != tt.want {
			t.Errorf("ShouldRetry(%d, %q, %v) = %v, want %v", tt.status, tt.code, tt.err, got, tt.want)
		}
		if got := RetryByStatus(tt.status, tt.code, tt.err); got != (tt.want && !tt.byCode) {
			t.Errorf("RetryByStatus(%d, %q, %v) = %v, want %v", tt.status, tt.code, tt.err, got, tt.want && !tt.byCode)
		}
	}
}

// The client waits its backoff before a retry, and at least an answer's
// Retry-After; with Jitter each wait gains a random part up to as much
// again, the same for the same intent every time; with IgnoreRetryAfter
// it waits its backoff only.
func TestTheWaitsBeforeARetry(t *testing.T) {
	for _, tt := range []struct {
		name       string
		retryAfter string
		jitter     bool
		ignore     bool
		backoff    []time.Duration
		want       func([]time.Duration) bool
	}{
		{"fixed", "", false, false, nil, func(w []time.Duration) bool { return slices.Equal(w, DefaultBackoff) }},
		{"Retry-After 3", "3", false, false, nil, func(w []time.Duration) bool {
			return slices.Equal(w, []time.Duration{3 * time.Second, 3 * time.Second})
		}},
		{"Retry-After past the cap", "86400", false, false, nil, func(w []time.Duration) bool { return slices.Equal(w, []time.Duration{MaxRetryAfter, MaxRetryAfter}) }},
		{"Retry-After a date", "Wed, 21 Oct 2015 07:28:00 GMT", false, false, nil, func(w []time.Duration) bool { return slices.Equal(w, DefaultBackoff) }},
		{"no backoff, Retry-After ignored", "1", false, true, []time.Duration{0, 0}, func(w []time.Duration) bool { return slices.Equal(w, []time.Duration{0, 0}) }},
		{"jitter", "", true, false, nil, func(w []time.Duration) bool {
			return len(w) == 2 && w[0] >= time.Second && w[0] < 2*time.Second && w[1] >= 2*time.Second && w[1] < 4*time.Second && w[0] != time.Second
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(http.StatusServiceUnavailable)
			}))
			defer server.Close()
			waits := func() []time.Duration {
				clk := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
				c := &Client{Token: "tok-ada", HTTP: server.Client(), Clock: clk, Trace: trace.New(clk, trace.Options{}), Backoff: tt.backoff,
					Jitter: tt.jitter, IgnoreRetryAfter: tt.ignore, Picker: &api.RoundRobin{Instances: []*api.Instance{{Name: "api-1", URL: server.URL}}}}
				out := c.Book(t.Context(), Intent{Number: 3, Copy: 2, EventID: 1, Quantity: 1, Key: uuid.New()})
				if len(out.Tries) != 3 {
					t.Fatalf("%d tries", len(out.Tries))
				}
				if want := clk.Sleeps(); out.Tries[2].SentAt != want[0]+want[1] {
					t.Errorf("try 3 sent at %s, after sleeps %v", out.Tries[2].SentAt, want)
				}
				return clk.Sleeps()
			}
			w := waits()
			if !tt.want(w) {
				t.Errorf("waits %v", w)
			}
			if again := waits(); !slices.Equal(again, w) {
				t.Errorf("a second run waited %v, the first %v", again, w)
			}
		})
	}
}

// RetryAfterCap bounds how long an answer's Retry-After holds the client
// (learn check's tests wait at their own scale).
func TestRetryAfterCap(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer server.Close()
	clk := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	c := &Client{Token: "tok-ada", HTTP: server.Client(), Clock: clk, Trace: trace.New(clk, trace.Options{}),
		Backoff: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, RetryAfterCap: time.Second,
		Picker: &api.RoundRobin{Instances: []*api.Instance{{Name: "api-1", URL: server.URL}}}}
	c.Book(t.Context(), Intent{Number: 1, EventID: 1, Quantity: 1, Key: uuid.New()})
	if got, want := clk.Sleeps(), []time.Duration{time.Second, time.Second}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
}
