package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/proxy"
	"github.com/learn-idempotency/learn/sim/trace"
)

// learnerBook books one intent of user (quantity seats of the run's
// event) with the learner's own client: learn's exercise harness runs its
// Book (POST /learn/book on the first base URL) against learn's proxy in
// front of that URL, with plan's faults and the check's backoff. The
// outcome is read off what the proxy carried: each request a try, its key
// from the key header, and what the client got (the API's answer, a reset
// connection, or the proxy's 502); the time between two tries' arrivals
// is the client's wait before the second (sim.Facts.Waits).
func (r *run) learnerBook(ctx context.Context, user, quantity int, plan func(trace.Attempt) proxy.Fault) (client.Outcome, error) {
	r.learner, r.plan = true, plan
	u := r.cfg.Users[user]
	backoff := []int{}
	for _, d := range r.opts.Backoff {
		backoff = append(backoff, int(d/time.Millisecond))
	}
	body, err := json.Marshal(map[string]any{"base": r.proxies[0].URL, "header": u.Headers, "event_id": r.event, "quantity": quantity, "backoff_ms": backoff})
	if err != nil {
		return client.Outcome{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.URLs[0]+"/learn/book", bytes.NewReader(body))
	if err != nil {
		return client.Outcome{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		return client.Outcome{}, fmt.Errorf("learn's harness did not run your Book (POST /learn/book): %w", err)
	}
	var said struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&said)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return client.Outcome{}, fmt.Errorf("learn's harness answered %d to POST /learn/book: main.go and learn.go are learn's, restore them with learn exercises init --restore", resp.StatusCode)
	}
	w := NewWire(r.cfg)
	o := client.Outcome{Intent: client.Intent{Number: 1, EventID: r.event, Quantity: quantity}, Token: u.Name}
	passages := r.pxs[0].Passages()
	r.waits = map[sim.TryRef]time.Duration{}
	for i, ps := range passages {
		if i > 0 {
			r.waits[sim.TryRef{Intent: 1, Try: i + 1}] = ps.At.Sub(passages[i-1].At)
		}
		key := ps.Header.Get(r.cfg.Request.KeyHeader)
		if i == 0 {
			o.Intent.Key, _ = uuid.Parse(key)
		}
		t := client.TryResult{Try: i + 1, Instance: r.proxies[0].Name}
		if key != o.Intent.Key.String() {
			t.Key = key // a key of its own: the client changed it
		}
		var a proxy.Answer
		if len(ps.Answers) > 0 {
			a = ps.Answers[0]
		}
		switch {
		case a.Err != nil || ps.Fault == proxy.LoseAnswer:
			t.Error = "the connection was reset without an answer (learn's proxy)"
			o.Err = fmt.Errorf("%s", t.Error)
		case ps.Fault == proxy.GatewayError:
			ans := client.Answer{Status: http.StatusBadGateway}
			t.Status, t.Answer = ans.Status, &ans
			o.Answer, o.Err = &ans, nil
		default:
			ans := w.Answer(a.Status, a.Header, a.Body)
			t.Status, t.Answer = ans.Status, &ans
			if ans.Error != nil {
				t.Code = ans.Error.Code
			}
			if ans.Booking != nil {
				t.BookingID = ans.Booking.ID
			}
			o.Answer, o.Err = &ans, nil
		}
		o.Tries = append(o.Tries, t)
	}
	if len(o.Tries) == 0 {
		why := "it sent nothing"
		if said.Error != "" {
			why += ": " + said.Error
		}
		return client.Outcome{}, fmt.Errorf("your Book sent no request to the base URL it was given (%s)", why)
	}
	return o, nil
}
