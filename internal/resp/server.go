package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxRequest is the most bytes one request may take on the wire. A request
// over it is answered with an error reply and its connection closed, as a
// malformed one is: learn's commands take about a hundred bytes.
const MaxRequest = 64 << 10

// Clock is where a [Server] reads the time that keys expire by. sim's
// clock.Clock is one: a scenario's fake clock, moved forward a day, expires
// a 24-hour key at once.
type Clock interface {
	// Now returns the current time of this clock.
	Now() time.Time
}

// wallClock is time.Now, the clock of a Server given none.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Server is a small Redis server inside learn: it speaks RESP2 on a
// loopback TCP port and serves GET, SET (with EX or PX, NX or XX), DEL and
// PING on one keyspace held in memory. A key set with a TTL expires when
// its clock passes the deadline; an expired key is gone for every command
// and is removed when one next touches it. Every other command is answered
// "-ERR unknown command 'NAME'" and the connection stays open; a malformed
// request (not an array of bulk strings, or over [MaxRequest]) is answered
// with an error and the connection closed. Safe for concurrent use, one
// goroutine per connection. The zero value is not usable; call NewServer.
type Server struct {
	clock Clock

	mu     sync.Mutex // guards the fields below
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	err    error // why the accept loop stopped, if not Close

	wg sync.WaitGroup // the accept loop and every connection's goroutine

	data sync.Mutex // guards keys
	keys map[string]entry
}

// entry is one key's value and the time it expires after (zero: never).
type entry struct {
	val      string
	deadline time.Time
}

// live reports whether e holds at now: a key expires once now is past its
// deadline, as Redis's keys do.
func (e entry) live(now time.Time) bool { return e.deadline.IsZero() || !now.After(e.deadline) }

// NewServer returns a server whose keys expire by clock (nil: the wall
// clock). It listens once [Server.Start] is called.
func NewServer(clock Clock) *Server {
	if clock == nil {
		clock = wallClock{}
	}
	return &Server{clock: clock, conns: map[net.Conn]struct{}{}, keys: map[string]entry{}}
}

// Start listens on a free loopback port (127.0.0.1) and serves there until
// Close. It fails if the server was started or closed before.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.ln != nil {
		return errors.New("resp: server already started")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.ln = ln
	s.wg.Add(1)
	go s.accept(ln)
	return nil
}

// Addr is the address the server listens on (host:port), or "" before
// Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops listening, closes every connection and returns once each of
// the server's goroutines has ended. The keys are dropped with the server.
// It returns the error that stopped the server before, if any; safe to
// call more than once, and before Start.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ln := s.ln
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// accept serves each connection in a goroutine of its own. An Accept error
// other than Close's ends the server: the listener is closed, so clients
// are refused rather than left waiting, and Close returns the error.
func (s *Server) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			if !s.closed {
				s.err = fmt.Errorf("resp: accept: %w", err)
			}
			s.mu.Unlock()
			_ = ln.Close()
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = conn.Close()
			continue // Accept fails next: Close has closed ln
		}
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(conn)
	}
}

// serve answers the requests of one connection in order until the client
// goes, a request is malformed, or Close.
func (s *Server) serve(conn net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		_ = conn.Close()
	}()
	r := bufio.NewReader(conn)
	w := bufio.NewWriter(conn)
	for {
		args, err := readRequest(r)
		if err != nil {
			var perr protocolError
			if errors.As(err, &perr) {
				writeError(w, "ERR Protocol error: "+string(perr))
				if w.Flush() == nil {
					linger(conn, r)
				}
			}
			return
		}
		s.exec(w, args)
		// Requests sent together (pipelined) get their replies together.
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// lingerFor and lingerBytes bound how long, and how much of what the
// client still sends, a connection closed for a malformed request is read
// and thrown away before it is closed.
const (
	lingerFor   = time.Second
	lingerBytes = 4 * MaxRequest
)

// linger closes conn's writing half and reads what the client still sends
// (up to lingerBytes, for up to lingerFor, or until the client closes), so
// that the error reply just written reaches the client: a socket closed
// with unread input sends a reset, which may throw the reply away before
// the client reads it.
func linger(conn net.Conn, r *bufio.Reader) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_ = conn.SetReadDeadline(time.Now().Add(lingerFor))
	_, _ = io.Copy(io.Discard, io.LimitReader(r, lingerBytes))
}

// protocolError is a request that breaks RESP2: it is answered with an
// error reply and the connection closed.
type protocolError string

func (e protocolError) Error() string { return "resp: protocol error: " + string(e) }

// readRequest reads one request, an array of bulk strings, of at most
// MaxRequest bytes. It returns a protocolError for a malformed one and the
// reader's error (io.EOF: the client went) otherwise.
func readRequest(r *bufio.Reader) ([]string, error) {
	left := MaxRequest
	line := func() (string, error) {
		b, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return "", protocolError("a line over " + strconv.Itoa(r.Size()) + " bytes")
		}
		if err != nil {
			return "", err
		}
		if left -= len(b); left < 0 {
			return "", protocolError("a request over " + strconv.Itoa(MaxRequest) + " bytes")
		}
		if len(b) < 2 || b[len(b)-2] != '\r' {
			return "", protocolError("a line not ended by CRLF")
		}
		return string(b[:len(b)-2]), nil
	}
	head, err := line()
	if err != nil {
		return nil, err
	}
	if head == "" || head[0] != '*' {
		return nil, protocolError(fmt.Sprintf("expected '*', got %q", head))
	}
	n, err := strconv.Atoi(head[1:])
	// Each argument takes at least six bytes ("$0\r\n\r\n").
	if err != nil || n < 1 || n > left/6 {
		return nil, protocolError("invalid multibulk length")
	}
	args := make([]string, 0, min(n, 8))
	for range n {
		h, err := line()
		if err != nil {
			return nil, err
		}
		if h == "" || h[0] != '$' {
			return nil, protocolError(fmt.Sprintf("expected '$', got %q", h))
		}
		size, err := strconv.Atoi(h[1:])
		if err != nil || size < 0 {
			return nil, protocolError("invalid bulk length")
		}
		if left -= size + 2; left < 0 {
			return nil, protocolError("a request over " + strconv.Itoa(MaxRequest) + " bytes")
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		if b[size] != '\r' || b[size+1] != '\n' {
			return nil, protocolError("a bulk string not ended by CRLF")
		}
		args = append(args, string(b[:size]))
	}
	return args, nil
}

// exec runs one command and writes its reply.
func (s *Server) exec(w *bufio.Writer, args []string) {
	name, args := args[0], args[1:]
	arity := func(ok bool) bool {
		if !ok {
			writeError(w, "ERR wrong number of arguments for '"+strings.ToLower(name)+"' command")
		}
		return ok
	}
	switch strings.ToUpper(name) {
	case "PING":
		if !arity(len(args) <= 1) {
			return
		}
		if len(args) == 1 {
			writeBulk(w, args[0])
			return
		}
		_, _ = w.WriteString("+PONG\r\n")
	case "GET":
		if !arity(len(args) == 1) {
			return
		}
		s.data.Lock()
		e, ok := s.lookup(args[0])
		s.data.Unlock()
		if !ok {
			_, _ = w.WriteString("$-1\r\n")
			return
		}
		writeBulk(w, e.val)
	case "SET":
		if !arity(len(args) >= 2) {
			return
		}
		s.set(w, args[0], args[1], args[2:])
	case "DEL":
		if !arity(len(args) >= 1) {
			return
		}
		s.data.Lock()
		n := 0
		for _, k := range args {
			if _, ok := s.lookup(k); ok {
				delete(s.keys, k)
				n++
			}
		}
		s.data.Unlock()
		writeInt(w, n)
	default:
		writeError(w, fmt.Sprintf("ERR unknown command '%.128s'", name))
	}
}

// lookup returns key's entry if it holds now, and removes it if it has
// expired. The caller holds s.data.
func (s *Server) lookup(key string) (entry, bool) {
	e, ok := s.keys[key]
	if !ok {
		return entry{}, false
	}
	if !e.live(s.clock.Now()) {
		delete(s.keys, key)
		return entry{}, false
	}
	return e, true
}

// set runs SET key val [NX|XX] [EX seconds|PX milliseconds], the options
// in any order, as Redis does: +OK when the key was written, the nil reply
// when NX or XX kept it from being written. A SET with no EX or PX leaves
// the key without a TTL.
func (s *Server) set(w *bufio.Writer, key, val string, opts []string) {
	var nx, xx bool
	var ttl time.Duration
	for i := 0; i < len(opts); i++ {
		switch o := strings.ToUpper(opts[i]); {
		case o == "NX" && !xx:
			nx = true
		case o == "XX" && !nx:
			xx = true
		case (o == "EX" || o == "PX") && ttl == 0 && i+1 < len(opts):
			i++
			n, err := strconv.ParseInt(opts[i], 10, 64)
			if err != nil {
				writeError(w, "ERR value is not an integer or out of range")
				return
			}
			unit := time.Millisecond
			if o == "EX" {
				unit = time.Second
			}
			if n <= 0 || n > math.MaxInt64/int64(unit) {
				writeError(w, "ERR invalid expire time in 'set' command")
				return
			}
			ttl = time.Duration(n) * unit
		default:
			writeError(w, "ERR syntax error")
			return
		}
	}
	s.data.Lock()
	defer s.data.Unlock()
	if _, exists := s.lookup(key); (nx && exists) || (xx && !exists) {
		_, _ = w.WriteString("$-1\r\n")
		return
	}
	e := entry{val: val}
	if ttl > 0 {
		e.deadline = s.clock.Now().Add(ttl)
	}
	s.keys[key] = e
	_, _ = w.WriteString("+OK\r\n")
}

func writeBulk(w *bufio.Writer, s string) {
	_, _ = w.WriteString("$" + strconv.Itoa(len(s)) + "\r\n")
	_, _ = w.WriteString(s)
	_, _ = w.WriteString("\r\n")
}

func writeInt(w *bufio.Writer, n int) { _, _ = w.WriteString(":" + strconv.Itoa(n) + "\r\n") }

// writeError writes an error reply; a CR or LF in msg (a command's name
// echoed back) becomes a space, since an error reply is one line.
func writeError(w *bufio.Writer, msg string) {
	_, _ = w.WriteString("-" + strings.NewReplacer("\r", " ", "\n", " ").Replace(msg) + "\r\n")
}
