//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package quietconn

import (
	"net"
	"runtime"
	"strings"
	"testing"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// Dead tells an idle connection from one the other side spoke
// on or closed, without taking a byte.
func TestClosedByServer(t *testing.T) {
	idle, _ := tcpPair(t)
	if Dead(idle) {
		t.Error("an idle connection counts as closed")
	}
	spoken, server := tcpPair(t)
	if _, err := server.Write([]byte("E")); err != nil {
		t.Fatal(err)
	}
	for !Dead(spoken) { // until the byte has crossed loopback
	}
	b := make([]byte, 1)
	if n, err := spoken.Read(b); n != 1 || b[0] != 'E' {
		t.Errorf("the peek took the byte: read %d %q %v", n, b[:n], err)
	}
	closed, server := tcpPair(t)
	server.Close()
	for !Dead(closed) { // until the end has crossed loopback
	}
}

// Dead never waits, not even while another goroutine is blocked
// reading the connection (pgconn's background reader can be, on an idle
// connection, after a write that was slow): the pool calls it on every
// acquire, and one that waited held the request and, at the stop, learn
// serve, for good.
func TestClosedByServerNeverWaits(t *testing.T) {
	client, server := tcpPair(t)
	read := make(chan []byte)
	go func() {
		b := make([]byte, 1)
		n, _ := client.Read(b)
		read <- b[:n]
	}()
	for !blockedIn("IO wait", "TestClosedByServerNeverWaits.func1") { // until the reader waits for data
		runtime.Gosched()
	}
	if Dead(client) {
		t.Error("an idle connection counts as closed")
	}
	if _, err := server.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if b := <-read; string(b) != "x" {
		t.Errorf("the reader got %q", b)
	}
}

// blockedIn reports whether a goroutine whose stack holds fn is blocked in
// state (as runtime.Stack shows it, e.g. "IO wait").
func blockedIn(state, fn string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "["+state) && strings.Contains(g, fn) {
			return true
		}
	}
	return false
}
