package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/trace"
)

// A Wire is the shape of one booking API: how a try of an intent is
// written as an HTTP request and how an answer is read. The client and the
// lossy network are the same for every API; only the wire differs.
// [LearnWire] is learn's own API (the zero Client's and Network's); learn
// check makes one from its config for any other.
type Wire interface {
	// Request is the HTTP request of one try of in, sent to the API
	// instance at base (a base URL) by the user whose token it is. The
	// try's attempt is in ctx (trace.AttemptFrom).
	Request(ctx context.Context, base, token string, in Intent) (*http.Request, error)
	// Answer reads one answer: a booking for an answer that made or
	// replayed one, else the refusal or failure.
	Answer(status int, header http.Header, body []byte) Answer
}

// LearnWire is learn's own API: POST {base}/bookings with the user's
// bearer token, the intent's key in Idempotency-Key, the try in
// X-Request-Id, and {"event_id", "quantity"}; a 200's BookResponse (a
// replay marked by Idempotent-Replayed), or problem details.
type LearnWire struct{}

// Request writes learn's POST /bookings.
func (LearnWire) Request(ctx context.Context, base, token string, in Intent) (*http.Request, error) {
	body, _ := json.Marshal(map[string]any{"event_id": in.EventID, "quantity": in.Quantity})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/bookings", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(api.HeaderIdempotencyKey, in.Key.String())
	req.Header.Set(api.HeaderRequestID, api.RequestID(trace.AttemptFrom(ctx)))
	return req, nil
}

// Answer reads learn's answer (DecodeAnswer).
func (LearnWire) Answer(status int, header http.Header, body []byte) Answer {
	return DecodeAnswer(status, header, body)
}

// wireOr is w, or learn's own when w is nil.
func wireOr(w Wire) Wire {
	if w == nil {
		return LearnWire{}
	}
	return w
}
