package client

import (
	"context"
	"fmt"
	"testing"

	"github.com/learn-idempotency/learn/sim/engine"
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
