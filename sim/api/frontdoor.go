package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// The codes of the front door's own answers.
const (
	CodeBadGateway     = "bad_gateway"     // 502: the API instance gave no answer
	CodeGatewayTimeout = "gateway_timeout" // 504: the API instance gave no answer in time
)

// FrontDoor is the load balancer in front of several API instances that the
// interview card talks about: a retry may land on another instance than the
// first try, and only a key kept in the database (not in one instance's
// memory) makes that retry a replay. It is a reverse proxy that sends each
// request to the next instance in turn (RoundRobin), with the request's
// headers as they came (Authorization and Idempotency-Key among them), and
// passes the instance's answer back as it is, with the instance's
// X-Learn-Instance header. learn serve puts it at --addr.
//
// It reads a request's whole body (at most 64 KiB, the API's own limit)
// before it picks an instance: a client that sends slowly holds its own
// connection to the front door and nothing else, and its body arrives at
// the instance at once.
//
// Its own answers are JSON ErrorResponses, as the API's are: 413
// body_too_large for a body over 64 KiB, 408 request_timeout for a body
// that did not arrive within ServeLimits.Read, 502 bad_gateway when the
// chosen instance gives no answer and 504 gateway_timeout when it gives
// none within half of ServeLimits.Write (in both, nothing is known about
// the booking, so the client retries with the same key). It logs one line
// per request at info level once it is answered ("POST /bookings → api-2",
// with status, to, url and key; "POST /bookings" for one it refused
// itself) and each 502 and 504 at error level, all with
// instance=front-door. Safe for concurrent use.
type FrontDoor struct {
	pick     *RoundRobin
	urls     map[*Instance]*url.URL
	proxy    *httputil.ReverseProxy
	log      *slog.Logger
	limits   ServeLimits
	upstream time.Duration // how long an instance's answer may take; 0: no limit
}

// passing is, in a request's context, what the front door knows about the
// request it passes on: the instance the proxy picked, and the request's
// own context (the proxy's has the upstream deadline).
type passing struct {
	to     *Instance
	client context.Context
}

type passingKey struct{}

// NewFrontDoor returns a front door over instances (at least one), logging
// to log, whose listener keeps limits (Serve) and whose connections to the
// instances keep them too: at most limits.MaxConns to each instance, idle
// ones closed before the instance would close them. An instance whose URL
// does not parse is an error.
func NewFrontDoor(instances []*Instance, log *slog.Logger, limits ServeLimits) (*FrontDoor, error) {
	if len(instances) == 0 {
		return nil, errors.New("a front door needs at least one API instance")
	}
	f := &FrontDoor{
		pick:     &RoundRobin{Instances: instances},
		urls:     make(map[*Instance]*url.URL, len(instances)),
		log:      log.With("instance", "front-door"),
		limits:   limits,
		upstream: limits.Write / 2,
	}
	for _, in := range instances {
		u, err := url.Parse(in.URL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("API instance %s has a bad URL %q: want http://host:port", in.Name, in.URL)
		}
		f.urls[in] = u
	}
	idle := 90 * time.Second
	if limits.Idle > 0 {
		idle = limits.Idle / 2 // never a connection the instance is closing
	}
	keep := 64
	if limits.MaxConns > 0 {
		keep = limits.MaxConns
	}
	f.proxy = &httputil.ReverseProxy{
		Rewrite:      f.rewrite,
		ErrorHandler: f.fail,
		ErrorLog:     slog.NewLogLogger(f.log.Handler(), slog.LevelWarn),
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxConnsPerHost:     limits.MaxConns,
			MaxIdleConnsPerHost: keep, // not DefaultTransport's 2: a new connection per request under load
			IdleConnTimeout:     idle,
			DisableCompression:  true, // the answer passes as the instance wrote it
		},
	}
	return f, nil
}

// Logger is the front door's logger (instance=front-door).
func (f *FrontDoor) Logger() *slog.Logger { return f.log }

// Serve serves the front door on ln with its limits until the returned
// server is shut down.
func (f *FrontDoor) Serve(ln net.Listener) *HTTPServer { return Serve(ln, f, f.limits, f.log) }

// ServeHTTP reads r's body, passes r to the next API instance and its
// answer back, and logs the request.
func (f *FrontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	attrs := []any{}
	if k := keyForLog(r.Header); k != "" {
		attrs = append(attrs, "key", k)
	}
	line := cutForLog(r.Method) + " " + cutForLog(r.URL.Path)

	var body []byte
	var err error
	if r.ContentLength > MaxBodyBytes {
		err = &http.MaxBytesError{Limit: MaxBodyBytes}
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	}
	if err != nil {
		if stopping(r.Context()) {
			return // cut while learn serve stops: the server counts it
		}
		writeProblem(rec, bodyReadError(err))
		f.log.InfoContext(r.Context(), line, append([]any{"status", rec.status, "err", err}, attrs...)...)
		return
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	// The transport may send the request again on a fresh connection when
	// a kept-alive one turns out closed (the request carries an
	// Idempotency-Key, so net/http counts it replayable).
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }

	p := &passing{client: r.Context()}
	ctx := context.WithValue(r.Context(), passingKey{}, p)
	if f.upstream > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.upstream)
		defer cancel()
	}
	f.proxy.ServeHTTP(rec, r.WithContext(ctx))
	if p.to != nil {
		line += " → " + p.to.Name
		attrs = append([]any{"to", p.to.Name, "url", f.urls[p.to].String()}, attrs...)
	}
	attrs = append([]any{"status", rec.status}, attrs...)
	switch {
	case stopping(r.Context()):
		attrs = append(attrs, "cut", errStopping.Error())
	case r.Context().Err() != nil:
		attrs = append(attrs, "cut", "the client went away before the answer")
	}
	f.log.InfoContext(r.Context(), line, attrs...)
}

func (f *FrontDoor) rewrite(pr *httputil.ProxyRequest) {
	in := f.pick.Pick()
	if p, ok := pr.In.Context().Value(passingKey{}).(*passing); ok {
		p.to = in
	}
	pr.SetURL(f.urls[in])
	pr.SetXForwarded()
	// The body is here already: the instance has nothing to continue, and
	// its 100 Continue would reach the client after the front door's own.
	pr.Out.Header.Del("Expect")
}

// fail answers a request the chosen instance gave no answer to: 504 when
// the upstream deadline passed, 502 otherwise (both logged as errors); a
// request whose own client went away, or that learn serve cut while it
// stopped, gets a 503 no one reads.
func (f *FrontDoor) fail(w http.ResponseWriter, r *http.Request, err error) {
	to, client := "?", r.Context()
	if p, ok := r.Context().Value(passingKey{}).(*passing); ok {
		client = p.client
		if p.to != nil {
			to = p.to.Name
		}
	}
	e := &Error{Status: http.StatusBadGateway, Code: CodeBadGateway,
		Message: "API instance " + to + " gave no answer; nothing is known about the booking, so retry with the same idempotency key"}
	switch {
	case client.Err() != nil: // ServeHTTP's line says so
		writeProblem(w, &Error{Status: http.StatusServiceUnavailable, Code: CodeBadGateway,
			Message: "The request was cut before API instance " + to + " answered; retry with the same idempotency key"})
		return
	case errors.Is(err, context.DeadlineExceeded):
		e = &Error{Status: http.StatusGatewayTimeout, Code: CodeGatewayTimeout,
			Message: fmt.Sprintf("API instance %s gave no answer within %s; nothing is known about the booking, so retry with the same idempotency key", to, f.upstream)}
	}
	f.log.ErrorContext(r.Context(), "no answer from the API instance", "to", to, "err", err)
	writeProblem(w, e)
}
