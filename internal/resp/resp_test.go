package resp

import (
	"bufio"
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Every test ends with no goroutine of a server or a client left.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a Clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// startServer starts a Server on clk and closes it when the test ends.
func startServer(t *testing.T, clk Clock) *Server {
	t.Helper()
	srv := NewServer(clk)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv
}

// client returns a Client of srv, closed when the test ends.
func client(t *testing.T, srv *Server) *Client {
	t.Helper()
	c := New(srv.Addr())
	t.Cleanup(func() { c.Close() })
	return c
}

// The RESP client against learn's server: replies of every kind the
// server sends, an error reply the connection survives, a connection the
// server closed and the client dials again, and a cancelled context.
func TestRESPClient(t *testing.T) {
	clk := &fakeClock{now: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}
	srv := startServer(t, clk)
	c := client(t, srv)
	ctx := t.Context()

	if _, err := c.Do(ctx, "GET", "k"); !errors.Is(err, ErrNil) {
		t.Fatalf("GET of a missing key: %v, want the nil reply", err)
	}
	if r, err := c.Do(ctx, "SET", "k", "b7", "PX", "60000"); err != nil || r != "OK" {
		t.Fatalf("SET = %v, %v; want OK", r, err)
	}
	if r, err := c.Do(ctx, "GET", "k"); err != nil || r != "b7" {
		t.Fatalf("GET = %v, %v; want b7", r, err)
	}
	if r, err := c.Do(ctx, "PING"); err != nil || r != "PONG" {
		t.Errorf("PING = %v, %v; want PONG", r, err)
	}
	clk.Advance(2 * time.Minute)
	if _, err := c.Do(ctx, "GET", "k"); !errors.Is(err, ErrNil) {
		t.Errorf("GET after the TTL: %v, want the nil reply", err)
	}
	var rerr Error
	if _, err := c.Do(ctx, "NOSUCHCOMMAND", "a"); !errors.As(err, &rerr) || rerr != "ERR unknown command 'NOSUCHCOMMAND'" {
		t.Errorf("an unknown command: %v, want the error reply \"ERR unknown command 'NOSUCHCOMMAND'\"", err)
	}
	// The connection survives an error reply.
	if r, err := c.Do(ctx, "SET", "k", "b8"); err != nil || r != "OK" {
		t.Fatalf("SET after an error reply = %v, %v; want OK", r, err)
	}
	if r, err := c.Do(ctx, "DEL", "k", "gone"); err != nil || r != int64(1) {
		t.Errorf("DEL = %v (%T), %v; want the integer 1", r, r, err)
	}

	// A request over MaxRequest: the server answers with an error and
	// closes the connection, the client's next command fails on it, and
	// the one after dials again.
	_, err := c.Do(ctx, "SET", "k", strings.Repeat("x", MaxRequest))
	if !errors.As(err, &rerr) || rerr != "ERR Protocol error: a request over 65536 bytes" {
		t.Fatalf("a request over MaxRequest: %v, want the protocol error reply", err)
	}
	if r, err := c.Do(ctx, "PING"); err == nil || errors.As(err, new(Error)) {
		t.Fatalf("PING on the connection the server closed = %v, %v; want a failed read", r, err)
	}
	if r, err := c.Do(ctx, "PING", "again"); err != nil || r != "again" {
		t.Fatalf("PING on a new connection = %v, %v; want again", r, err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Do(cancelled, "GET", "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("GET with a cancelled context: %v, want context.Canceled", err)
	}
}

// The client reads arrays, which learn's server never sends: nested
// values, a nil item, a nil array.
func TestReadRESPArrays(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
		err  error
	}{
		{"*3\r\n$1\r\na\r\n:5\r\n+OK\r\n", []any{"a", int64(5), "OK"}, nil},
		{"*2\r\n$-1\r\n*1\r\n$0\r\n\r\n", []any{nil, []any{""}}, nil},
		{"*0\r\n", []any{}, nil},
		{"*-1\r\n", nil, ErrNil},
	} {
		got, err := readRESP(bufio.NewReader(strings.NewReader(tc.in)))
		if !errors.Is(err, tc.err) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("readRESP(%q) = %#v, %v; want %#v, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
