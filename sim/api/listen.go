package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dustin/go-humanize/english"
)

// ServeLimits bound what the clients of one listener can hold: the time to
// send a request, the time its answer may take, how long a kept-alive
// connection may idle, how many connections are open at once, and how long
// a request waits for the database. learn serve runs every listener (the
// front door and each API instance) with WorkshopLimits.
//
// The zero value has no limit at all, and that is what the scenarios need:
// a request held at a gated step waits as long as the learner pauses, with
// the database connection it holds. A zero field means no limit of its kind.
type ServeLimits struct {
	// ReadHeader bounds the time to read a request's line and headers: a
	// client that is slower is cut without an answer.
	ReadHeader time.Duration
	// Read bounds the time to read the whole request, body included: a body
	// still arriving then is answered 408 request_timeout and the
	// connection closed.
	Read time.Duration
	// Write bounds the time from the end of a request's headers to the end
	// of its answer: an answer that cannot be written by then is cut.
	Write time.Duration
	// Idle bounds how long a kept-alive connection waits for its next
	// request before it is closed.
	Idle time.Duration
	// MaxConns caps the connections open at once on the listener; one more
	// is answered 503 too_many_connections with Retry-After and closed.
	MaxConns int
	// MaxHeaderBytes bounds a request's line and headers (0: net/http's 1
	// MB). A request over it is answered by net/http itself, before any
	// handler runs, with 431, in JSON as every other answer (see
	// jsonErrorsConn). With MaxConns it bounds the memory slow clients can
	// hold.
	MaxHeaderBytes int
	// DBWait bounds how long a request waits for one of its API instance's
	// database connections (not what it does with one): past it, 503
	// database_busy with Retry-After.
	DBWait time.Duration
	// LockWait bounds how long a booking waits for the event's row lock,
	// however many others queue for it: it is the statement_timeout of the
	// API instances' connections, so the statement that takes the lock is
	// cancelled LockWait after it began (PostgreSQL's lock_timeout would
	// bound each lock of the queue apart, and start again at the next), the
	// booking is rolled back and answered 503 event_busy with Retry-After.
	// Every other statement of the instances has the same bound.
	LockWait time.Duration
}

// WorkshopLimits are learn serve's limits: generous for curl and a
// workshop's scripts, short enough that slow or idle clients cannot hold
// the server (lesson section 4 of issue 11: 7,000 slow clients once took
// every file descriptor).
func WorkshopLimits() ServeLimits {
	return ServeLimits{
		ReadHeader: 5 * time.Second,
		Read:       10 * time.Second,
		Write:      30 * time.Second,
		Idle:       30 * time.Second,
		MaxConns:   256,
		// 256 connections each holding a megabyte of headers took 500 MB.
		MaxHeaderBytes: 64 << 10,
		DBWait:         2 * time.Second,
		LockWait:       5 * time.Second,
	}
}

// RetryAfter is the Retry-After of every 503 learn answers, in seconds.
const RetryAfter = "1"

// HTTPServer serves one listener with ServeLimits and knows which of its
// handlers still run: Shutdown and Close return once every handler has
// returned, so nothing it serves answers or logs after them. Every
// request's context ends when the server is cut. Its own log lines (those
// of net/http among them) go to the logger it was given.
type HTTPServer struct {
	srv      *http.Server
	addr     net.Addr
	cut      context.CancelFunc // ends every request's context
	done     chan struct{}      // closed when Serve has returned
	err      error              // why Serve returned, nil when stopped
	handlers handlerCount
}

// Serve serves h on ln with limits until Shutdown or Close; log gets the
// server's own lines (net/http's errors, the connection cap). The listener
// is closed when the server stops.
func Serve(ln net.Listener, h http.Handler, limits ServeLimits, log *slog.Logger) *HTTPServer {
	base, cut := context.WithCancelCause(context.Background())
	s := &HTTPServer{addr: ln.Addr(), cut: func() { cut(errStopping) }, done: make(chan struct{})}
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.handlers.run(w, r, h) }),
		ReadHeaderTimeout: limits.ReadHeader,
		ReadTimeout:       limits.Read,
		WriteTimeout:      limits.Write,
		IdleTimeout:       limits.Idle,
		MaxHeaderBytes:    limits.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// OPTIONS * goes to h like any other request, whose answer is JSON.
		DisableGeneralOptionsHandler: true,
	}
	if limits.MaxConns > 0 {
		ln = newCapListener(ln, limits.MaxConns, log)
	}
	ln = &jsonErrorsListener{Listener: ln, maxHeaderBytes: limits.MaxHeaderBytes}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s
}

// errStopping is the cause of every request context's end when its server
// cuts it.
var errStopping = errors.New("the server stopped before the answer")

// stopping reports whether ctx, a request's context, ended because its
// server cut it (not because its client went away, or its body read
// failed: net/http ends the context then too).
func stopping(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errStopping) }

// Addr is the address the server listens on.
func (s *HTTPServer) Addr() net.Addr { return s.addr }

// Done is closed when the server has stopped serving: after Shutdown or
// Close, or when its listener failed (Err says why).
func (s *HTTPServer) Done() <-chan struct{} { return s.done }

// Err is why the server stopped serving by itself (its listener failed);
// nil while it serves and after Shutdown or Close.
func (s *HTTPServer) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Shutdown stops accepting connections and lets the requests in flight
// finish until ctx ends; then it cuts the rest (their contexts end and
// their connections close) and waits for their handlers to return. When it
// had to cut, it returns a *CutError that wraps ctx's error.
func (s *HTTPServer) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = &CutError{Requests: s.handlers.running(), Err: err}
		s.cut()
		_ = s.srv.Close()
	}
	<-s.done
	s.handlers.closeAndWait()
	return err
}

// CutError says that a server's Shutdown ran out of time and cut the
// requests still in flight.
type CutError struct {
	Requests int   // handlers still running when the time was up
	Err      error // the context's error
}

func (e *CutError) Error() string {
	were := "were"
	if e.Requests == 1 {
		were = "was"
	}
	return fmt.Sprintf("%s still in flight %s cut (%v)", english.Plural(e.Requests, "request", ""), were, e.Err)
}

func (e *CutError) Unwrap() error { return e.Err }

// Close cuts every request at once and waits for their handlers to return.
func (s *HTTPServer) Close() error {
	s.cut()
	err := s.srv.Close()
	<-s.done
	s.handlers.closeAndWait()
	return err
}

// handlerCount counts the handlers that run, so that a server can wait for
// them; once closed, a request that comes late is cut without an answer.
type handlerCount struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   chan struct{} // closed when n drops to 0 after closeAndWait began
}

func (c *handlerCount) run(w http.ResponseWriter, r *http.Request, h http.Handler) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		panic(http.ErrAbortHandler) // net/http cuts the connection, and logs nothing
	}
	c.n++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.n--
		if c.n == 0 && c.idle != nil {
			close(c.idle)
			c.idle = nil
		}
	}()
	h.ServeHTTP(w, r)
}

func (c *handlerCount) running() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *handlerCount) closeAndWait() {
	c.mu.Lock()
	c.closed = true
	if c.n == 0 {
		c.mu.Unlock()
		return
	}
	if c.idle == nil {
		c.idle = make(chan struct{})
	}
	idle := c.idle
	c.mu.Unlock()
	<-idle
}

// CodeTooManyConnections is the code of the 503 a listener answers when it
// has ServeLimits.MaxConns connections open.
const CodeTooManyConnections = "too_many_connections"

// refuseLinger bounds how long a refused connection is kept to deliver its
// 503: long enough for the client to read it, short enough that refusing is
// cheap.
const refuseLinger = time.Second

// capListener hands out at most max connections at once. One more is
// answered 503 too_many_connections (JSON, Retry-After, Connection: close)
// and closed, by a goroutine of its own; past max of those at once, it is
// closed without an answer. It logs a warning when it starts refusing, and
// then at most one line every 10 s with the count refused since.
type capListener struct {
	net.Listener
	slots    chan struct{}
	refusing atomic.Int64
	answer   []byte
	log      *slog.Logger

	mu       sync.Mutex
	refused  int
	lastLine time.Time
}

func newCapListener(ln net.Listener, maxConns int, log *slog.Logger) *capListener {
	answer := problemBytes(&Error{Status: http.StatusServiceUnavailable, Code: CodeTooManyConnections,
		Message: fmt.Sprintf("The server is full: it holds at most %d connections at once, from all clients together, and all are open; retry in a moment (with the same idempotency key)", maxConns)})
	return &capListener{Listener: ln, slots: make(chan struct{}, maxConns), answer: answer, log: log}
}

// Accept returns the next connection while fewer than max are open; the
// slot is freed when the connection is closed.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &slotConn{Conn: c, free: func() { <-l.slots }}, nil
		default:
			l.refuse(c)
		}
	}
}

func (l *capListener) refuse(c net.Conn) {
	l.mu.Lock()
	l.refused++
	if now := time.Now(); now.Sub(l.lastLine) >= 10*time.Second {
		l.log.Warn(fmt.Sprintf("%d connections open, the most allowed: refusing new ones with 503", cap(l.slots)),
			"refused", l.refused, "addr", l.Addr().String())
		l.lastLine, l.refused = now, 0
	}
	l.mu.Unlock()
	if l.refusing.Add(1) > int64(cap(l.slots)) {
		l.refusing.Add(-1)
		_ = c.Close()
		return
	}
	go func() {
		defer l.refusing.Add(-1)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(refuseLinger))
		if _, err := c.Write(l.answer); err != nil {
			return
		}
		// Close our side, then read what the client still sends until it
		// closes its side: closing with unread data would reset the
		// connection, and the client could lose the answer.
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, MaxBodyBytes))
	}()
}

// slotConn frees its listener's slot once, when it is closed.
type slotConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}

// CloseWrite closes the sending side, as net/http does before it closes a
// connection whose request it did not read to the end (a body over the
// limit), so that the client still reads the answer.
func (c *slotConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
