package api

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// RoundRobin hands out instances in turn, as a load balancer in front of
// several API instances does. Safe for concurrent use.
type RoundRobin struct {
	mu        sync.Mutex
	Instances []*Instance
	next      int
}

// Pick returns the next instance in turn.
func (r *RoundRobin) Pick() *Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := r.Instances[r.next%len(r.Instances)]
	r.next++
	return in
}

// Instance is an API instance listening on a loopback port.
type Instance struct {
	Name string // its lane, e.g. "api-1"
	URL  string // http://127.0.0.1:<port>
	API  *API
	srv  *HTTPServer
}

// StartInstance serves a on addr ("127.0.0.1:0" picks a free port) with
// limits (the zero ServeLimits for a scenario: no limit) until Shutdown or
// Close. The listener is open when it returns, so requests can be sent at
// once. The server's own log lines go to a.Log.
func StartInstance(name, addr string, a *API, limits ServeLimits) (*Instance, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("API instance %s cannot listen on %s: %w", name, addr, err)
	}
	return StartInstanceOn(name, ln, a, limits), nil
}

// StartInstanceOn is StartInstance on a listener that is open already
// (learn serve listens on every address before it starts anything).
func StartInstanceOn(name string, ln net.Listener, a *API, limits ServeLimits) *Instance {
	srv := Serve(ln, a.Handler(), limits, a.Log)
	return &Instance{Name: name, URL: "http://" + srv.Addr().String(), API: a, srv: srv}
}

// Shutdown stops accepting requests and waits for those in flight until
// ctx ends; then it cuts what is left. It returns once every handler has
// returned.
func (in *Instance) Shutdown(ctx context.Context) error { return in.srv.Shutdown(ctx) }

// Close stops the instance at once, cutting requests in flight, and
// returns once every handler has returned.
func (in *Instance) Close() error { return in.srv.Close() }
