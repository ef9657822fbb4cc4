package resp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Client speaks the Redis protocol (RESP2) to one Redis server over one
// TCP connection, dialled on the first command and again after one
// failed. Commands are sent one at a time; ctx's deadline bounds each.
// Safe for concurrent use.
type Client struct {
	addr string

	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

// ErrNil is a nil reply: GET of a missing or expired key.
var ErrNil = errors.New("redis: nil")

// Error is an error reply of the server ("-ERR …").
type Error string

func (e Error) Error() string { return "redis: " + string(e) }

// New returns a client of the Redis server at addr (host:port); it dials
// on the first command.
func New(addr string) *Client { return &Client{addr: addr} }

// Do sends one command and returns its reply: a string for a simple or
// bulk string, an int64 for an integer, []any for an array, ErrNil for a
// nil bulk string, an Error for an error reply. A connection that failed is closed and
// dialled again on the next command.
func (c *Client) Do(ctx context.Context, args ...string) (any, error) {
	// A context already ended sends nothing: the AfterFunc below runs in
	// a goroutine of its own, and a quick server could answer first.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return nil, err
		}
		c.conn, c.r = conn, bufio.NewReader(conn)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Time{}
	}
	_ = c.conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	buf := make([]byte, 0, 64)
	buf = append(buf, '*')
	buf = strconv.AppendInt(buf, int64(len(args)), 10)
	buf = append(buf, "\r\n"...)
	for _, a := range args {
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(len(a)), 10)
		buf = append(buf, "\r\n"...)
		buf = append(buf, a...)
		buf = append(buf, "\r\n"...)
	}
	reply, err := c.roundTrip(buf)
	if err != nil && !errors.Is(err, ErrNil) && !errors.As(err, new(Error)) {
		_ = c.conn.Close()
		c.conn, c.r = nil, nil
		if ctx.Err() != nil {
			err = ctx.Err()
		}
	}
	return reply, err
}

func (c *Client) roundTrip(cmd []byte) (any, error) {
	if _, err := c.conn.Write(cmd); err != nil {
		return nil, err
	}
	return readRESP(c.r)
}

// readRESP reads one reply.
func readRESP(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("redis: malformed reply %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return nil, Error(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("redis: malformed length %q", body)
		}
		if n < 0 {
			return nil, ErrNil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("redis: malformed length %q", body)
		}
		if n < 0 {
			return nil, ErrNil
		}
		items := make([]any, n)
		for i := range items {
			if items[i], err = readRESP(r); err != nil && !errors.Is(err, ErrNil) {
				return nil, err
			}
		}
		return items, nil
	}
	return nil, fmt.Errorf("redis: unknown reply type %q", kind)
}

// Close closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn, c.r = nil, nil
	return err
}
