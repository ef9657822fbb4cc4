//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package quietconn

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// quietPair returns a Conn and the plain connection at its other end,
// over a Unix socket or TCP on loopback, both closed when t ends.
func quietPair(t *testing.T, network string) (*Conn, net.Conn) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	q, ok := Wrap(c).(*Conn)
	if !ok {
		t.Fatalf("Wrap(%T) is not a *Conn", c)
	}
	t.Cleanup(func() { q.Close(); peer.Close() })
	return q, peer
}

// Four MiB each way, more than a socket's buffer, so writes are partial and
// wait in the netpoller, and reads come in many pieces.
func TestQuietConnCarriesEveryByte(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			q, peer := quietPair(t, network)
			out := make([]byte, 4<<20)
			back := make([]byte, 4<<20)
			rand.Read(out)
			rand.Read(back)
			got := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(io.LimitReader(peer, int64(len(out))))
				got <- b
				peer.Write(back)
			}()
			n, err := q.Write(out)
			if err != nil || n != len(out) {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(out))
			}
			if b := <-got; !bytes.Equal(b, out) {
				t.Fatalf("the peer read %d bytes, not the %d written (or not the same ones)", len(b), len(out))
			}
			in := make([]byte, len(back))
			if _, err := io.ReadFull(q, in); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(in, back) {
				t.Fatal("read back bytes that differ from what the peer wrote")
			}
			if n, err := q.Read(nil); n != 0 || err != nil {
				t.Errorf("Read(nil) = %d, %v; want 0, nil", n, err)
			}
		})
	}
}

func TestQuietConnEndsAtEOF(t *testing.T) {
	q, peer := quietPair(t, "unix")
	peer.Write([]byte("bye"))
	peer.Close()
	b, err := io.ReadAll(q)
	if err != nil || string(b) != "bye" {
		t.Fatalf("ReadAll = %q, %v; want \"bye\", nil (io.EOF ends it)", b, err)
	}
	if n, err := q.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read after the end = %d, %v; want 0, io.EOF", n, err)
	}
	// Writing to a peer that has gone fails with the system's error, not a
	// signal and not a short count without an error.
	var err2 error
	for range 100 {
		if _, err2 = q.Write(make([]byte, 64<<10)); err2 != nil {
			break
		}
	}
	if !errors.Is(err2, syscall.EPIPE) && !errors.Is(err2, syscall.ECONNRESET) {
		t.Fatalf("Write to a closed peer: %v; want EPIPE or ECONNRESET", err2)
	}
	if _, ok := errors.AsType[*net.OpError](err2); !ok {
		t.Errorf("Write's error %T is not a *net.OpError", err2)
	}
}

// pgx cancels a query by moving the connection's deadline: a read waiting
// for an answer must end with a timeout error and work again afterwards.
func TestQuietConnKeepsDeadlines(t *testing.T) {
	q, peer := quietPair(t, "unix")
	q.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := q.Read(make([]byte, 8))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline: %v; want os.ErrDeadlineExceeded", err)
	}
	if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() {
		t.Fatalf("Read past its deadline: %v is not a net.Error with Timeout()", err)
	}
	q.SetReadDeadline(time.Time{})
	peer.Write([]byte("ok"))
	b := make([]byte, 2)
	if _, err := io.ReadFull(q, b); err != nil || string(b) != "ok" {
		t.Fatalf("Read after the deadline was cleared = %q, %v", b, err)
	}
	q.SetWriteDeadline(time.Now().Add(-time.Second))
	if _, err := q.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write past its deadline: %v; want os.ErrDeadlineExceeded", err)
	}
}

func TestQuietConnClosedWhileReading(t *testing.T) {
	q, _ := quietPair(t, "unix")
	done := make(chan error, 1)
	go func() {
		_, err := q.Read(make([]byte, 8))
		done <- err
	}()
	for !blockedIn("IO wait", "TestQuietConnClosedWhileReading.func1") { // until the read waits in the netpoller
		runtime.Gosched()
	}
	q.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read when the connection is closed: %v; want net.ErrClosed", err)
	}
}

// A read and a write of an answer's size allocate nothing: each booking
// makes several, and a closure made per call would be garbage each time.
func TestQuietConnReadWriteAllocateNothing(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage and the race detector allocate on their own")
	}
	q, peer := quietPair(t, "unix")
	msg := make([]byte, 300)
	buf := make([]byte, 300)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := q.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(peer, buf); err != nil {
			t.Fatal(err)
		}
		if _, err := peer.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(q, buf); err != nil {
			t.Fatal(err)
		}
	})
	// The peer is a plain net.Conn: its Read and Write allocate nothing
	// either, so every allocation here would be Conn's.
	if allocs != 0 {
		t.Fatalf("a write and a read of 300 bytes allocated %.1f times; want 0", allocs)
	}
}

// Reads and writes from different goroutines at once, as pgconn's
// background reader and a writer may: each direction keeps its own state.
func TestQuietConnReadsAndWritesAtOnce(t *testing.T) {
	q, peer := quietPair(t, "tcp")
	const n = 1 << 20
	out := make([]byte, n)
	rand.Read(out)
	go io.Copy(peer, peer) // an echo
	done := make(chan error, 1)
	go func() {
		_, err := q.Write(out)
		done <- err
	}()
	in := make([]byte, n)
	if _, err := io.ReadFull(q, in); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, out) {
		t.Fatal("the echo came back different")
	}
}
