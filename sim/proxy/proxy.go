// Package proxy is learn's lossy proxy: a real HTTP proxy on loopback in
// front of any booking API, which does to each request what its plan
// says. It is how learn check loses an answer without faking the client:
// the client sends a real request over a real connection, the API gets it
// and answers, and the proxy then drops the answer (the connection is
// reset, so the client cannot tell whether the API acted), cuts it in the
// middle of its headers, answers 502 in its place, or sends two copies of
// the request at once.
//
// [Proxy] is the whole of it: [Proxy.Start] listens, [Proxy.Plan] picks a
// [Fault] per request, and every request it carries is kept as a [Passage]
// (what it sent, what the API answered, what reached the client) for the
// checker's own trace ([Proxy.Passages]).
package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Fault is what the proxy does to one request.
type Fault int

// The faults.
const (
	// Deliver carries the request and its answer.
	Deliver Fault = iota
	// LoseAnswer carries the request, reads the API's whole answer (so the
	// API has finished, and committed), then resets the client's
	// connection instead of passing it on.
	LoseAnswer
	// CutHeaders carries the request, reads the whole answer, passes on
	// the first bytes of its status line and headers, and closes the
	// connection: the client reads a malformed answer.
	CutHeaders
	// Duplicate sends two copies of the request to the API at once and
	// passes on the answer that arrives first; the other is kept, unread
	// by the client.
	Duplicate
	// GatewayError carries the request, reads the API's whole answer, and
	// answers 502 Bad Gateway in its place, as a gateway does whose
	// upstream acted and then failed it: a 5xx after the booking was made.
	GatewayError
	// Together holds the request until Group requests marked Together
	// have arrived, then sends them all at once by last-byte sync: each
	// goes out on its own connection with its headers and all but the
	// last byte of its body, and when every one is that far, the last
	// bytes are written together, so the API starts them within
	// microseconds of each other. The answers are passed on.
	Together
	// Crash carries the request with HeaderFault set to CrashBeforeCommit,
	// which learn's exercise harness obeys: the API instance drops the
	// request's database connection at COMMIT (or before a second write
	// outside a transaction) and its HTTP connection, as a crash would.
	// Another API ignores the header and answers.
	Crash
)

// HeaderFault asks learn's exercise harness for a fault in the request it
// is sent on; any other API ignores it.
const HeaderFault = "X-Learn-Fault"

// CrashBeforeCommit is HeaderFault's value for Crash.
const CrashBeforeCommit = "crash-before-commit"

func (f Fault) String() string {
	switch f {
	case Deliver:
		return "deliver"
	case LoseAnswer:
		return "lose the answer"
	case CutHeaders:
		return "cut the answer's headers"
	case Duplicate:
		return "duplicate"
	case GatewayError:
		return "answer 502 in its place"
	case Together:
		return "send together"
	case Crash:
		return "crash the API instance before COMMIT"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// MaxBody is the largest request body the proxy carries; a bigger one is
// answered 413 by the proxy itself.
const MaxBody = 1 << 20

// MaxAnswer is the largest answer of the API the proxy reads; a bigger
// one is no answer (the client's connection is reset), and its passage
// says why.
const MaxAnswer = 4 << 20

var errAnswerTooLarge = errors.New("the API's answer is over 4 MiB: learn's proxy stopped reading it")

// Answer is an answer of the API as the proxy read it.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error // the API gave no answer (connection refused, reset)
}

// Passage is one request the proxy carried: what the client sent, the
// fault it applied, what the API answered (two answers for a Duplicate,
// the one passed on first), and whether an answer reached the client.
type Passage struct {
	Method, Path string
	Header       http.Header // the request's
	Body         []byte
	Fault        Fault
	Answers      []Answer
	Delivered    bool
	At           time.Time
}

// Proxy is the lossy proxy in front of one API base URL.
type Proxy struct {
	// Plan picks the fault for a request (its headers and body are read
	// already: Plan may look at both); nil delivers everything.
	Plan func(r *http.Request, body []byte) Fault
	// Kept, when set, is told each passage once its answer is in and
	// before the client gets anything of it (a screen that plays a run
	// holds the answer there).
	Kept func(ctx context.Context, ps Passage)

	upstream *url.URL
	client   *http.Client
	// ctx bounds every request to the API: not the client's (the API
	// finishes what it got even when the client has left), but cancelled
	// by Close, which cuts what the proxy still carries.
	ctx    context.Context
	cancel context.CancelFunc
	srv    *http.Server
	ln     net.Listener

	mu       sync.Mutex
	passages []Passage
	size     int    // of a group of Together requests (SetGroup)
	group    *group // the Together requests gathering now
}

// SetGroup sets how many requests Together holds for, from the next group
// on. A request marked Together while it is below 2 is delivered at once.
func (p *Proxy) SetGroup(n int) {
	p.mu.Lock()
	p.size = n
	p.mu.Unlock()
}

// group is one gathering of Together requests: arrived counts them in,
// ready counts those whose body is sent but its last byte, and release
// lets the last bytes go.
type group struct {
	size           int
	arrived, ready int
	all, release   chan struct{}
	mu             sync.Mutex
}

// join counts a request into p's current group, and returns the group;
// nil when there are no groups (SetGroup below 2).
func (p *Proxy) join() *group {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.size < 2 {
		return nil
	}
	if p.group == nil {
		p.group = &group{size: p.size, all: make(chan struct{}), release: make(chan struct{})}
	}
	g := p.group
	g.arrived++
	if g.arrived == g.size {
		close(g.all)
		p.group = nil // the next Together request starts a new group
	}
	return g
}

// atLastByte is called when a request of g has sent all but its last
// byte; the last one to get there releases them all.
func (g *group) atLastByte() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ready++
	if g.ready == g.size {
		close(g.release)
	}
}

// heldBody reads body, holding its last byte until g releases it.
type heldBody struct {
	body    []byte
	off     int
	g       *group
	waited  bool
	ctxDone <-chan struct{}
}

func (b *heldBody) Read(p []byte) (int, error) {
	if b.off >= len(b.body) {
		return 0, io.EOF
	}
	if b.off == len(b.body)-1 && !b.waited {
		b.waited = true
		b.g.atLastByte()
		select {
		case <-b.g.release:
		case <-b.ctxDone:
			return 0, errors.New("learn's proxy: the client left while its request was held")
		}
	}
	end := len(b.body) - 1 // all but the last byte, then the last
	if b.off == end || b.waited {
		end = len(b.body)
	}
	n := copy(p, b.body[b.off:end])
	b.off += n
	return n, nil
}

// New returns a proxy in front of the API at upstream (a base URL such
// as http://127.0.0.1:8080); Start makes it listen.
func New(upstream string) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// base URL, such as http://127.0.0.1:8080", upstream)
	}
	tr := &http.Transport{}
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = t.Clone()
	}
	tr.DisableCompression = true // the body is passed on as the API sent it
	ctx, cancel := context.WithCancel(context.Background())
	return &Proxy{upstream: u, ctx: ctx, cancel: cancel, client: &http.Client{
		Transport: tr,
		// A redirect is the API's answer, passed on as it is.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// Start listens on a free loopback port and serves until Close; it
// returns the proxy's base URL, to use in place of the API's.
func (p *Proxy) Start() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	p.ln = ln
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

// Close stops the proxy and cuts what it still carries.
func (p *Proxy) Close() error {
	p.cancel()
	if p.srv == nil {
		return nil
	}
	err := p.srv.Close()
	p.client.CloseIdleConnections()
	return err
}

// Passages returns every request carried so far, in the order they came.
func (p *Proxy) Passages() []Passage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Passage(nil), p.passages...)
}

func (p *Proxy) keep(ctx context.Context, ps Passage) {
	p.mu.Lock()
	p.passages = append(p.passages, ps)
	p.mu.Unlock()
	if p.Kept != nil {
		p.Kept(ctx, ps)
	}
}

// hopHeaders are the hop-by-hop headers a proxy does not pass on (RFC 9110
// §7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		http.Error(w, "learn's proxy: the request body could not be read (at most 1 MiB): "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	fault := Deliver
	if p.Plan != nil {
		fault = p.Plan(r, body)
	}
	ps := Passage{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, Fault: fault, At: time.Now()}
	// The passage is kept before the client gets anything: once its
	// answer, reset or cut has arrived, Passages has it.
	if fault == Duplicate {
		answers := make(chan Answer, 2)
		for range 2 {
			go func() { answers <- p.send(r, body) }()
		}
		first := <-answers
		ps.Answers = append(ps.Answers, first, <-answers)
		ps.Delivered = first.Err == nil
		p.keep(r.Context(), ps)
		pass(w, first)
		return
	}
	var a Answer
	if fault == Crash {
		r = r.Clone(r.Context())
		r.Header.Set(HeaderFault, CrashBeforeCommit)
	}
	if fault == Together && len(body) > 0 {
		a = p.sendTogether(r, body)
	} else {
		a = p.send(r, body)
	}
	ps.Answers = append(ps.Answers, a)
	ps.Delivered = a.Err == nil && (fault == Deliver || fault == Together || fault == Crash)
	p.keep(r.Context(), ps)
	switch {
	case a.Err != nil:
		// No answer from the API: the client's connection goes the same way.
		reset(w)
	case fault == LoseAnswer:
		reset(w)
	case fault == CutHeaders:
		cut(w, a)
	case fault == GatewayError:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "learn's proxy: 502 Bad Gateway in place of the API's answer (the API acted; its answer was not passed on)\n")
	default:
		pass(w, a)
	}
}

// sendTogether waits for the rest of r's group, then sends r with its
// last byte held until the whole group is that far (Together).
func (p *Proxy) sendTogether(r *http.Request, body []byte) Answer {
	g := p.join()
	if g == nil {
		return p.send(r, body)
	}
	select {
	case <-g.all:
	case <-r.Context().Done():
		return Answer{Err: errors.New("learn's proxy: the client left before its group had gathered")}
	}
	return p.sendBody(r, &heldBody{body: body, g: g, ctxDone: r.Context().Done()}, int64(len(body)))
}

// send sends one copy of r (with body) to the API and reads its whole
// answer.
func (p *Proxy) send(r *http.Request, body []byte) Answer {
	return p.sendBody(r, bytes.NewReader(body), int64(len(body)))
}

// sendBody sends r with the body read from body, of length n.
func (p *Proxy) sendBody(r *http.Request, body io.Reader, n int64) Answer {
	target := *p.upstream
	target.Path = strings.TrimSuffix(p.upstream.Path, "/") + r.URL.Path
	target.RawQuery = r.URL.RawQuery
	out, err := http.NewRequestWithContext(p.ctx, r.Method, target.String(), body)
	if err != nil {
		return Answer{Err: err}
	}
	out.ContentLength = n
	if n == 0 {
		out.Body = http.NoBody
	}
	out.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := p.client.Do(out)
	if err != nil {
		return Answer{Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err == nil && len(b) > MaxAnswer {
		err = errAnswerTooLarge
	}
	if err != nil {
		return Answer{Status: resp.StatusCode, Header: resp.Header, Err: err}
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// pass writes a to the client, or resets the connection when a is no
// answer.
func pass(w http.ResponseWriter, a Answer) {
	if a.Err != nil {
		reset(w)
		return
	}
	for k, vs := range a.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

// reset closes the client's connection with a TCP reset, writing nothing.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// cut writes the start of a's status line and headers and closes the
// connection.
func cut(w http.ResponseWriter, a Answer) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Le", a.Status, http.StatusText(a.Status), a.Header.Get("Content-Type"))
	_, _ = io.WriteString(conn, head)
}
