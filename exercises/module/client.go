//go:build !solution

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// Book is the client of a booking form: it sends one booking intent of the
// user whose headers are header (their Authorization), quantity seats of
// event eventID, to the booking API at base (POST base/bookings), and
// returns the last answer it got: its status and body, or the error of the
// last try when none came. It is yours to write (the exercise client).
//
// As it starts, it makes a new idempotency key for every try, sends again
// every answer that is not a 2xx, and tries up to 5 times.
//
// TODO(client): the lesson's rule (How it works, In learn): one key per
// intent, the same on every retry; retry only a network error or a 5xx,
// never a 4xx (its answer is final); at most 3 tries, waiting Backoff[0]
// before the second and Backoff[1] before the third.
func Book(ctx context.Context, hc *http.Client, base string, header http.Header, eventID int64, quantity int) (status int, body []byte, err error) {
	for try := 1; try <= 5; try++ {
		if try > 1 {
			if err := wait(ctx, Backoff[min(try-2, len(Backoff)-1)]); err != nil {
				return 0, nil, err
			}
		}
		req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, base+"/bookings", strings.NewReader(fmt.Sprintf(`{"event_id": %d, "quantity": %d}`, eventID, quantity)))
		if rerr != nil {
			return 0, nil, rerr
		}
		req.Header = header.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", uuid.NewString())
		resp, derr := hc.Do(req)
		if derr != nil {
			status, body, err = 0, nil, derr
			continue
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
		if status < 300 {
			return status, body, err
		}
	}
	return status, body, err
}
