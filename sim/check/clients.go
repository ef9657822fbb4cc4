package check

import (
	"context"
	"errors"
	"net/http"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/proxy"
	"github.com/learn-idempotency/learn/sim/trace"
)

// client is a browser for user (an index into the config's users) whose
// tries meet plan's faults at the proxy (nil: none), over a transport of
// its own.
func (r *run) client(user int, plan func(trace.Attempt) proxy.Fault) *client.Client {
	if plan != nil {
		r.plan = plan
	}
	u := r.cfg.Users[user]
	tr := &http.Transport{}
	r.mu.Lock()
	r.transports = append(r.transports, tr)
	r.mu.Unlock()
	return &client.Client{
		Token: u.Name, User: u.Name, Wire: NewWire(r.cfg), Clock: clock.Real{}, Trace: r.trace, Backoff: r.opts.Backoff, RetryAfterCap: r.opts.RetryAfterCap,
		// The lesson's rule, and a try that timed out (Options.Timeout)
		// is one that got no answer: it is retried too.
		Retry: func(status int, code string, err error) bool {
			if err != nil {
				return !errors.Is(err, context.Canceled)
			}
			return client.ShouldRetry(status, code, nil)
		},
		HTTP:   &http.Client{Transport: tr, Timeout: r.opts.Timeout},
		Picker: &picker{instances: r.proxies, other: r.other},
	}
}

// together sends intents at the same instant, each from its own client
// and connection, and returns their outcomes in order.
func (r *run) together(ctx context.Context, intents []client.Intent) []client.Outcome {
	for _, p := range r.pxs {
		p.SetGroup(len(intents))
	}
	clients := make([]*client.Client, len(intents))
	for i := range intents {
		clients[i] = r.client(0, nil)
	}
	return client.BookTogether(ctx, clients, intents)
}

// picker sends a client's first try to the first instance, and, when
// other is set, every later try to the second.
type picker struct {
	instances []*api.Instance
	other     bool
	picked    int
}

func (p *picker) Pick() *api.Instance {
	p.picked++
	if p.other && p.picked > 1 && len(p.instances) > 1 {
		return p.instances[1]
	}
	return p.instances[0]
}
