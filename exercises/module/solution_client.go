//go:build solution

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// Book sends one booking intent the lesson's way: one key for the intent,
// the same on every try; a network error or a 5xx tried again, a 2xx or a
// 4xx final; at most len(Backoff)+1 tries. (learn's reference solution.)
func Book(ctx context.Context, hc *http.Client, base string, header http.Header, eventID int64, quantity int) (status int, body []byte, err error) {
	key := uuid.NewString()
	for try := 1; try <= len(Backoff)+1; try++ {
		if try > 1 {
			if err := wait(ctx, Backoff[try-2]); err != nil {
				return 0, nil, err
			}
		}
		req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, base+"/bookings", strings.NewReader(fmt.Sprintf(`{"event_id": %d, "quantity": %d}`, eventID, quantity)))
		if rerr != nil {
			return 0, nil, rerr
		}
		req.Header = header.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, derr := hc.Do(req)
		if derr != nil {
			if ctx.Err() != nil {
				return 0, nil, ctx.Err()
			}
			status, body, err = 0, nil, derr
			continue
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
		if status < 500 {
			return status, body, err // a 2xx booked, a 4xx refused: final
		}
	}
	return status, body, err
}
