package resp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// do runs one command and fails the test on a reply that is neither a
// value nor the nil reply nor an error reply; it returns the value, nil
// for the nil reply, or the Error.
func do(t *testing.T, c *Client, args ...string) any {
	t.Helper()
	r, err := c.Do(t.Context(), args...)
	var rerr Error
	switch {
	case errors.Is(err, ErrNil):
		return nil
	case errors.As(err, &rerr):
		return rerr
	case err != nil:
		t.Fatalf("%q: %v", args, err)
	}
	return r
}

// A key's TTL runs on the server's clock: present up to its deadline
// (Redis keeps a key until the clock is past it), gone after, for GET, DEL
// and SET NX alike; a SET without EX or PX drops the TTL.
func TestServerExpiry(t *testing.T) {
	clk := &fakeClock{now: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}
	c := client(t, startServer(t, clk))

	if r := do(t, c, "SET", "px", "1", "PX", "60000"); r != "OK" {
		t.Fatalf("SET PX = %v, want OK", r)
	}
	if r := do(t, c, "set", "ex", "2", "ex", "90"); r != "OK" {
		t.Fatalf("set ex (lower case) = %v, want OK", r)
	}
	if r := do(t, c, "SET", "forever", "3"); r != "OK" {
		t.Fatalf("SET = %v, want OK", r)
	}
	clk.Advance(time.Minute - time.Millisecond)
	if r := do(t, c, "GET", "px"); r != "1" {
		t.Errorf("GET 1 ms before the PX deadline = %v, want 1", r)
	}
	clk.Advance(time.Millisecond)
	if r := do(t, c, "GET", "px"); r != "1" {
		t.Errorf("GET at the PX deadline = %v, want 1", r)
	}
	clk.Advance(time.Millisecond)
	if r := do(t, c, "GET", "px"); r != nil {
		t.Errorf("GET 1 ms past the PX deadline = %v, want the nil reply", r)
	}
	if r := do(t, c, "GET", "ex"); r != "2" {
		t.Errorf("GET at 60 s of an EX 90 key = %v, want 2", r)
	}
	clk.Advance(30 * time.Second)
	if r := do(t, c, "DEL", "ex", "px"); r != int64(0) {
		t.Errorf("DEL of two expired keys = %v, want 0", r)
	}

	// The redis-ttl scenario's timeline: a 24 h key, and a retry 25 h on.
	if r := do(t, c, "SET", "idem", "41", "PX", strconv.FormatInt((24*time.Hour).Milliseconds(), 10)); r != "OK" {
		t.Fatalf("SET PX 24h = %v", r)
	}
	if r := do(t, c, "SET", "cleared", "5", "EX", "1"); r != "OK" {
		t.Fatalf("SET EX 1 = %v", r)
	}
	if r := do(t, c, "SET", "cleared", "6"); r != "OK" {
		t.Fatalf("SET over it without a TTL = %v", r)
	}
	clk.Advance(25 * time.Hour)
	if r := do(t, c, "SET", "idem", "42", "NX"); r != "OK" {
		t.Errorf("SET NX 25 h after a 24 h key = %v, want OK (the key expired)", r)
	}
	if r := do(t, c, "GET", "idem"); r != "42" {
		t.Errorf("GET = %v, want 42", r)
	}
	if r := do(t, c, "GET", "cleared"); r != "6" {
		t.Errorf("GET of a key SET again without a TTL = %v, want 6", r)
	}
	clk.Advance(100 * 365 * 24 * time.Hour)
	if r := do(t, c, "GET", "forever"); r != "3" {
		t.Errorf("GET of a key without a TTL a century on = %v, want 3", r)
	}
}

// SET's options as Redis takes them: NX writes only a missing key, XX
// only an existing one, either in any order with EX or PX; a refused
// write is the nil reply and changes nothing; options that contradict
// each other or an expiry that is not a positive integer are errors.
func TestServerSetOptions(t *testing.T) {
	c := client(t, startServer(t, &fakeClock{}))
	for _, tc := range []struct {
		args []string
		want any
	}{
		{[]string{"SET", "k", "a", "NX"}, "OK"},
		{[]string{"SET", "k", "b", "NX"}, nil},
		{[]string{"GET", "k"}, "a"},
		{[]string{"SET", "k", "c", "XX", "PX", "10"}, "OK"},
		{[]string{"GET", "k"}, "c"},
		{[]string{"SET", "missing", "d", "PX", "10", "XX"}, nil},
		{[]string{"GET", "missing"}, nil},
		{[]string{"SET", "k", "e", "NX", "XX"}, Error("ERR syntax error")},
		{[]string{"SET", "k", "e", "EX", "1", "PX", "1000"}, Error("ERR syntax error")},
		{[]string{"SET", "k", "e", "PX"}, Error("ERR syntax error")},
		{[]string{"SET", "k", "e", "KEEPTTL"}, Error("ERR syntax error")},
		{[]string{"SET", "k", "e", "PX", "0"}, Error("ERR invalid expire time in 'set' command")},
		{[]string{"SET", "k", "e", "EX", "-3"}, Error("ERR invalid expire time in 'set' command")},
		{[]string{"SET", "k", "e", "EX", "9223372036854775807"}, Error("ERR invalid expire time in 'set' command")},
		{[]string{"SET", "k", "e", "PX", "soon"}, Error("ERR value is not an integer or out of range")},
		{[]string{"GET", "k"}, "c"},
		{[]string{"SET", "k"}, Error("ERR wrong number of arguments for 'set' command")},
		{[]string{"Get"}, Error("ERR wrong number of arguments for 'get' command")},
		{[]string{"DEL"}, Error("ERR wrong number of arguments for 'del' command")},
		{[]string{"PING", "a", "b"}, Error("ERR wrong number of arguments for 'ping' command")},
		{[]string{"DEL", "k", "k", "missing"}, int64(1)},
	} {
		if got := do(t, c, tc.args...); got != tc.want {
			t.Errorf("%q = %#v, want %#v", tc.args, got, tc.want)
		}
	}
}

// Any other command is an error reply naming it as sent, on one line,
// and the connection goes on.
func TestServerUnknownCommand(t *testing.T) {
	c := client(t, startServer(t, nil))
	for _, tc := range []struct {
		args []string
		want Error
	}{
		{[]string{"FLUSHALL"}, "ERR unknown command 'FLUSHALL'"},
		{[]string{"eval", "return 1", "0"}, "ERR unknown command 'eval'"},
		{[]string{"A\r\n+OK"}, "ERR unknown command 'A  +OK'"},
		{[]string{strings.Repeat("Z", 200)}, Error("ERR unknown command '" + strings.Repeat("Z", 128) + "'")},
	} {
		if got := do(t, c, tc.args...); got != tc.want {
			t.Errorf("%.40q = %#v, want %#v", tc.args, got, tc.want)
		}
	}
	if got := do(t, c, "PING"); got != "PONG" {
		t.Errorf("PING after the error replies = %v, want PONG", got)
	}
}

// A request that breaks RESP2 is answered with one protocol error and the
// connection is closed; a request of exactly MaxRequest bytes is served.
func TestServerMalformed(t *testing.T) {
	srv := startServer(t, nil)
	// set is a SET request of n bytes on the wire.
	set := func(n int) string {
		head := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n"
		size := n - len(head) - len("$\r\n\r\n")
		size -= len(strconv.Itoa(size - len(strconv.Itoa(size))))
		req := head + "$" + strconv.Itoa(size) + "\r\n" + strings.Repeat("v", size) + "\r\n"
		if len(req) != n {
			t.Fatalf("set(%d) is %d bytes", n, len(req))
		}
		return req
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"inline command", "PING\r\n", `expected '*', got "PING"`},
		{"simple string for a bulk", "*1\r\n+PING\r\n", `expected '$', got "+PING"`},
		{"count not a number", "*x\r\n", "invalid multibulk length"},
		{"empty array", "*0\r\n", "invalid multibulk length"},
		{"more arguments than fit", "*10923\r\n", "invalid multibulk length"},
		{"negative bulk length", "*1\r\n$-5\r\n", "invalid bulk length"},
		{"bulk longer than said", "*1\r\n$4\r\nPINGxx\r\n", "a bulk string not ended by CRLF"},
		{"LF alone", "*1\n", "a line not ended by CRLF"},
		{"endless line", "*" + strings.Repeat("1", 5000), "a line over 4096 bytes"},
		{"bulk over the bound", "*2\r\n$3\r\nGET\r\n$70000\r\n", "a request over 65536 bytes"},
		{"one byte over the bound", set(MaxRequest + 1), "a request over 65536 bytes"},
		{"exactly the bound, then garbage", set(MaxRequest) + "?\r\n", `expected '*', got "?"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tc.in); err != nil {
				t.Fatal(err)
			}
			// The server closes its end after the error: all it sends
			// reads to EOF.
			got, err := io.ReadAll(conn)
			if err != nil {
				t.Fatalf("read: %v (after %q)", err, got)
			}
			want := "-ERR Protocol error: " + tc.want + "\r\n"
			if strings.HasPrefix(tc.name, "exactly the bound") {
				want = "+OK\r\n" + want
			}
			if string(got) != want {
				t.Errorf("the server sent %q, want %q and the connection closed", got, want)
			}
		})
	}
}

// Clients at once, each on its connection: of eight SET NX of one key
// exactly one is written, and what each client wrote to keys of its own
// reads back as written. Replies to requests sent together come in order.
func TestServerConcurrentClients(t *testing.T) {
	srv := startServer(t, nil)
	const clients, keys = 8, 50
	var wg sync.WaitGroup
	won := make([]bool, clients)
	for i := range clients {
		c := client(t, srv)
		wg.Go(func() {
			ctx := t.Context()
			r, err := c.Do(ctx, "SET", "winner", strconv.Itoa(i), "NX")
			won[i] = err == nil && r == "OK"
			if err != nil && !errors.Is(err, ErrNil) {
				t.Errorf("client %d: SET NX: %v", i, err)
			}
			for k := range keys {
				if _, err := c.Do(ctx, "SET", fmt.Sprintf("c%d:%d", i, k), fmt.Sprint(i*1000+k)); err != nil {
					t.Errorf("client %d: SET: %v", i, err)
					return
				}
			}
			for k := range keys {
				if r, err := c.Do(ctx, "GET", fmt.Sprintf("c%d:%d", i, k)); err != nil || r != fmt.Sprint(i*1000+k) {
					t.Errorf("client %d: GET c%d:%d = %v, %v; want %d", i, i, k, r, err, i*1000+k)
				}
			}
		})
	}
	wg.Wait()
	winners := 0
	winner := -1
	for i, w := range won {
		if w {
			winners++
			winner = i
		}
	}
	c := client(t, srv)
	if winners != 1 || do(t, c, "GET", "winner") != strconv.Itoa(winner) {
		t.Errorf("%d SET NX written (%v), winner holds %v; want exactly one, holding its id", winners, won, do(t, c, "GET", "winner"))
	}
	all := []string{"DEL"}
	for i := range clients {
		for k := range keys {
			all = append(all, fmt.Sprintf("c%d:%d", i, k))
		}
	}
	if r := do(t, c, all...); r != int64(clients*keys) {
		t.Errorf("DEL of every client's keys = %v, want %d", r, clients*keys)
	}

	// Pipelined: three requests in one write, three replies in order.
	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "*3\r\n$3\r\nSET\r\n$1\r\np\r\n$1\r\n7\r\n*2\r\n$3\r\nGET\r\n$1\r\np\r\n*1\r\n$4\r\nPING\r\n"); err != nil {
		t.Fatal(err)
	}
	want := "+OK\r\n$1\r\n7\r\n+PONG\r\n"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != want {
		t.Errorf("pipelined replies %q, %v; want %q", got, err, want)
	}
}

// Close closes every connection, idle or not, and returns once every
// goroutine of the server has ended (TestMain checks none is left); the
// server cannot start again, and Close a second time is a no-op.
func TestServerClose(t *testing.T) {
	if got := NewServer(nil).Addr(); got != "" {
		t.Errorf("Addr before Start = %q, want \"\"", got)
	}
	if err := NewServer(nil).Close(); err != nil {
		t.Errorf("Close before Start: %v", err)
	}
	srv := NewServer(nil)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err == nil {
		t.Error("a second Start succeeded")
	}
	addr := srv.Addr()
	c := New(addr)
	defer c.Close()
	if r, err := c.Do(t.Context(), "SET", "k", "v"); err != nil || r != "OK" {
		t.Fatalf("SET = %v, %v", r, err)
	}
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	// A connection the server is linger-reading after a malformed request.
	lingering, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer lingering.Close()
	if _, err := io.WriteString(lingering, "PING\r\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(lingering, make([]byte, len("-ERR Protocol error: expected '*', got \"PING\"\r\n"))); err != nil {
		t.Fatal(err)
	}

	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n, err := idle.Read(make([]byte, 1)); err == nil {
		t.Errorf("an idle connection read %d bytes after Close, want it closed", n)
	}
	if r, err := c.Do(t.Context(), "GET", "k"); err == nil {
		t.Errorf("GET after Close = %v, want an error", r)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if err := srv.Start(); err == nil {
		t.Error("Start after Close succeeded")
	}
}
