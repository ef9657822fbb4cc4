package check

// The proxies' passages: as a report shows them, the API's own 5xx
// among them (for the judge), and each answer as a step of a played run.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/proxy"
	"github.com/learn-idempotency/learn/sim/trace"
)

// passageOf is ps, carried by the proxy of lane, as a report shows it.
func passageOf(lane string, cfg *Config, ps proxy.Passage) Passage {
	p := Passage{Instance: lane, Method: ps.Method, Path: ps.Path, RequestID: ps.Header.Get(api.HeaderRequestID),
		Key: ps.Header.Get(cfg.Request.KeyHeader), Fault: ps.Fault.String(), Delivered: ps.Delivered, At: ps.At.UTC().Format(time.RFC3339Nano)}
	if len(ps.Answers) > 0 {
		p.Status, p.Answer = ps.Answers[0].Status, cut(string(ps.Answers[0].Body), 500)
		if err := ps.Answers[0].Err; err != nil {
			p.Error = cut(err.Error(), 300)
		}
	}
	return p
}

// carried is a passage of one of a run's proxies, with the lane of the
// base URL it went to.
type carried struct {
	lane string
	ps   proxy.Passage
}

// serverErrors are the 5xx answers but 503 that the API gave of its own
// in all, by try: the answers the proxy read, whatever it passed on in
// their place.
func serverErrors(all []carried) map[sim.TryRef]string {
	out := map[sim.TryRef]string{}
	for _, c := range all {
		at, ok := api.ParseRequestID(c.ps.Header.Get(api.HeaderRequestID))
		if !ok {
			continue
		}
		for _, a := range c.ps.Answers {
			ref := sim.TryRef{Intent: at.Intent, Copy: at.Copy, Try: at.Try}
			if _, seen := out[ref]; a.Err == nil && a.Status >= 500 && a.Status != http.StatusServiceUnavailable && !seen {
				out[ref] = strings.TrimSpace(fmt.Sprintf("%d %s", a.Status, cut(strings.Join(strings.Fields(errorOf(a.Status, a.Body).Message), " "), 160)))
			}
		}
	}
	return out
}

// answered emits the step of an answer the API gave to a try, as learn's
// proxy read it, before the client gets anything of it: what the API
// said and what the proxy does with it.
func (r *run) answered(ctx context.Context, lane string, ps proxy.Passage) {
	at, ok := api.ParseRequestID(ps.Header.Get(api.HeaderRequestID))
	if !ok {
		return
	}
	p := passageOf(lane, r.cfg, ps)
	ev := trace.Event{Kind: trace.KindAnswer, From: lane, To: trace.LaneBrowser, Intent: at.Intent, Copy: at.Copy, Try: at.Try,
		Status: p.Status, Lost: !p.Delivered, Label: fmt.Sprint(p.Status)}
	said := fmt.Sprintf("%s answers %d", lane, p.Status)
	if p.Status == 0 {
		said, ev.Label = fmt.Sprintf("%s gives no answer (%s)", lane, cut(p.Error, 80)), "no answer"
	} else if a := NewWire(r.cfg).Answer(p.Status, nil, ps.Answers[0].Body); a.Booking != nil {
		said += ", booking " + cut(a.Booking.ID, 40)
		ev.BookingID = a.Booking.ID
	} else if a.Error != nil && a.Error.Message != "" {
		said += " " + cut(a.Error.Message, 80)
		ev.Message = a.Error.Message
	}
	ev.Text = said + "; " + proxySays(p.Status, ps.Fault)
	_ = r.trace.Emit(ctx, ev)
}

// proxySays is what learn's proxy does with an answer of status (0: none,
// the connection dropped) under fault: passes it on, or, for a lossy
// fault, what it will do instead.
func proxySays(status int, fault proxy.Fault) string {
	switch {
	case fault != proxy.Deliver && fault != proxy.Together && fault != proxy.Crash:
		return "learn's proxy will " + fault.String()
	case status == 0:
		return "learn's proxy passes the dropped connection on to the client"
	}
	return "learn's proxy passes it on"
}
