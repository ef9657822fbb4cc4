package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// CodeBadGateway is the code of the front door's 502: the API instance
// gave no answer.
const CodeBadGateway = "bad_gateway"

// FrontDoor is the load balancer in front of several API instances that the
// interview card talks about: a retry may land on another instance than the
// first try, and only a key kept in the database (not in one instance's
// memory) makes that retry a replay. It is a reverse proxy that sends each
// request to the next instance in turn (RoundRobin), with the request's
// headers as they came (Authorization and Idempotency-Key among them), and
// passes the instance's answer back as it is, with the instance's
// X-Learn-Instance header. learn serve puts it at --addr.
//
// Its own answers are JSON ErrorResponses, as the API's are: 413
// body_too_large for a body over 64 KiB (the API's own limit), and 502
// bad_gateway when the chosen instance gives no answer (nothing is known
// about the booking, so the client retries with the same key). It logs one
// line per request at info level ("POST /bookings → api-2", with to, url
// and key) and each 502 at error level, all with instance=front-door.
// Safe for concurrent use.
type FrontDoor struct {
	pick  *RoundRobin
	urls  map[*Instance]*url.URL
	proxy *httputil.ReverseProxy
	log   *slog.Logger
}

// chosenKey holds, in a request's context, the instance the front door
// picked for it (a **Instance the proxy fills in).
type chosenKey struct{}

// NewFrontDoor returns a front door over instances (at least one), logging
// to log. An instance whose URL does not parse is an error.
func NewFrontDoor(instances []*Instance, log *slog.Logger) (*FrontDoor, error) {
	if len(instances) == 0 {
		return nil, errors.New("a front door needs at least one API instance")
	}
	f := &FrontDoor{
		pick: &RoundRobin{Instances: instances},
		urls: make(map[*Instance]*url.URL, len(instances)),
		log:  log.With("instance", "front-door"),
	}
	for _, in := range instances {
		u, err := url.Parse(in.URL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("API instance %s has a bad URL %q: want http://host:port", in.Name, in.URL)
		}
		f.urls[in] = u
	}
	f.proxy = &httputil.ReverseProxy{
		Rewrite:      f.rewrite,
		ErrorHandler: f.fail,
		ErrorLog:     slog.NewLogLogger(f.log.Handler(), slog.LevelWarn),
	}
	return f, nil
}

// Logger is the front door's logger (instance=front-door), for the
// http.Server it runs in.
func (f *FrontDoor) Logger() *slog.Logger { return f.log }

// ServeHTTP passes r to the next API instance and its answer back.
func (f *FrontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes) // as the API itself allows
	chosen := new(*Instance)
	f.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chosenKey{}, chosen)))
}

func (f *FrontDoor) rewrite(pr *httputil.ProxyRequest) {
	in := f.pick.Pick()
	if chosen, ok := pr.In.Context().Value(chosenKey{}).(**Instance); ok {
		*chosen = in
	}
	u := f.urls[in]
	pr.SetURL(u)
	pr.SetXForwarded()
	attrs := []any{"to", in.Name, "url", u.String()}
	if k := keyForLog(pr.In.Header); k != "" {
		attrs = append(attrs, "key", k)
	}
	f.log.InfoContext(pr.In.Context(), fmt.Sprintf("%s %s → %s", cutForLog(pr.In.Method), cutForLog(pr.In.URL.Path), in.Name), attrs...)
}

func (f *FrontDoor) fail(w http.ResponseWriter, r *http.Request, err error) {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		writeJSON(w, http.StatusRequestEntityTooLarge, ErrorResponse{Error: errBodyTooLarge()})
		return
	}
	to := "?"
	if chosen, ok := r.Context().Value(chosenKey{}).(**Instance); ok && *chosen != nil {
		to = (*chosen).Name
	}
	f.log.ErrorContext(r.Context(), "no answer from the API instance", "to", to, "err", err)
	writeJSON(w, http.StatusBadGateway, ErrorResponse{Error: &Error{
		Status: http.StatusBadGateway, Code: CodeBadGateway,
		Message: "API instance " + to + " gave no answer; nothing is known about the booking, so retry with the same idempotency key"}})
}
