package client

import (
	"context"
	"fmt"
	"testing"
)

func TestShouldRetry(t *testing.T) {
	tests := []struct {
		status int
		err    error
		want   bool
	}{
		{0, ErrAnswerLost, true},
		{0, ErrNotSent, true},
		{0, fmt.Errorf("post: %w", ErrAnswerLost), true},
		{0, context.Canceled, false},
		{0, context.DeadlineExceeded, false},
		{500, nil, true},
		{502, nil, true},
		{503, nil, true},
		{200, nil, false},
		{400, nil, false},
		{401, nil, false},
		{404, nil, false},
		{408, nil, false}, // the API's 408 says so (api.errRequestTimeout)
		{409, nil, false},
		{422, nil, false},
	}
	for _, tt := range tests {
		if got := ShouldRetry(tt.status, tt.err); got != tt.want {
			t.Errorf("ShouldRetry(%d, %v) = %v, want %v", tt.status, tt.err, got, tt.want)
		}
	}
}
