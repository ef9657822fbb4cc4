package workshop

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// packet is an SSH binary packet (RFC 4253, 6) with payload, unencrypted.
func packet(payload string) string {
	pad := 4
	var b [5]byte
	binary.BigEndian.PutUint32(b[:4], uint32(1+len(payload)+pad))
	b[4] = byte(pad)
	return string(b[:]) + payload + strings.Repeat("\x00", pad)
}

// The key exchange has started once the client's version line (after any
// other lines) and one whole packet have come, however the bytes are cut;
// not before.
func TestKexSnifferSeesTheStartOfTheKeyExchange(t *testing.T) {
	kexinit := packet("\x14" + strings.Repeat("k", 300))
	for _, tc := range []struct {
		name, in string
		started  bool
	}{
		{"version and KEXINIT", "SSH-2.0-OpenSSH_9.6\r\n" + kexinit, true},
		{"lines before the version", "hello\r\nworld\nSSH-2.0-Go\n" + kexinit, true},
		{"version and more than a packet", "SSH-2.0-Go\r\n" + kexinit + packet("\x1e"), true},
		{"nothing", "", false},
		{"a version line only", "SSH-2.0-slow\r\n", false},
		{"a packet cut short", "SSH-2.0-Go\r\n" + kexinit[:len(kexinit)-1], false},
		{"no version line", "GET / HTTP/1.1\r\n\r\n" + kexinit, false},
		{"a line that only starts like a version", "SSH\r\n" + kexinit, false},
	} {
		// All at once, then cut at every byte.
		for _, cut := range []int{0, 1, 2, 3, 5, 7} {
			var s kexSniffer
			got, at := false, -1
			in := tc.in
			for len(in) > 0 && !got {
				n := len(in)
				if cut > 0 {
					n = min(cut, len(in))
				}
				got = s.feed([]byte(in[:n]))
				in = in[n:]
				if got {
					at = len(tc.in) - len(in)
				}
			}
			if got != tc.started {
				t.Errorf("%s (cut every %d bytes): started %v, want %v", tc.name, cut, got, tc.started)
			}
			if got && tc.name != "version and more than a packet" && at != len(tc.in) {
				t.Errorf("%s (cut every %d bytes): started at byte %d of %d, want the last", tc.name, cut, at, len(tc.in))
			}
		}
	}
}

// dialFrom is a TCP connection to w from the loopback address local
// (127.0.0.2 …: a stranger's address of its own).
func dialFrom(t *testing.T, w *Workshop, local string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.DialContext(t.Context(), "tcp", w.Addr().String())
	if err != nil {
		t.Fatalf("dial from %s: %v", local, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// atThePrompt is an SSH connection from local that has come to the join
// code's prompt and waits there until release is closed; then it answers
// answer. It returns once the prompt is asked; done gets the outcome.
func atThePrompt(t *testing.T, w *Workshop, local, answer string, release <-chan struct{}) (done <-chan error) {
	t.Helper()
	c := dialFrom(t, w, local)
	asked := make(chan struct{})
	out := make(chan error, 1)
	go func() {
		var once sync.Once
		sc, chans, reqs, err := gossh.NewClientConn(c, w.Addr().String(), &gossh.ClientConfig{User: "eve", HostKeyCallback: gossh.InsecureIgnoreHostKey(),
			Auth: []gossh.AuthMethod{gossh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
				once.Do(func() { close(asked) })
				<-release
				return []string{answer}, nil
			})}})
		if err == nil {
			gossh.NewClient(sc, chans, reqs).Close()
		}
		once.Do(func() { close(asked) })
		out <- err
	}()
	<-asked
	return out
}

// refusedWithALine reads what the server says to a connection it refuses
// at once: one line, then the end.
func refusedWithALine(t *testing.T, c net.Conn) string {
	t.Helper()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("the refused connection read %q, %v", line, err)
	}
	return line
}

// A flood of TCP connections that say nothing (or only their version
// line), from the attendee's own address and from another, holds nobody
// out: the workshop keeps at most its limits of them, each giving way to
// a newcomer, and an attendee from either address gets in. Before, each
// was kept about 120 s with no cap: 8,000 in 0.5 s.
func TestSilentConnectionsHoldNobodyOut(t *testing.T) {
	limits := preauthLimits{perAddr: 8, total: 20, kexStart: time.Hour} // the deadline is not what frees them here
	w := startWorkshop(t, Config{preauth: &limits})
	for i := range 300 {
		c := dialFrom(t, w, []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}[i%3])
		if i%2 == 0 {
			if _, err := c.Write([]byte("SSH-2.0-slow\r\n")); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitUntil(t, "the flood to be accepted", func() string { return itoa(w.gate.stats().Total) }, func(s string) bool { return s == "20" })
	if s := w.gate.stats(); s.Most > limits.perAddr || s.Total > limits.total {
		t.Errorf("the workshop holds %+v connections before the code, over its limits %+v", s, limits)
	}
	for _, from := range []string{"127.0.0.1", "127.0.0.4"} {
		c := dialFrom(t, w, from)
		sc, chans, reqs, err := gossh.NewClientConn(c, w.Addr().String(), &gossh.ClientConfig{User: "ada",
			Auth: []gossh.AuthMethod{password(testCode)}, HostKeyCallback: gossh.InsecureIgnoreHostKey()})
		if err != nil {
			t.Fatalf("an attendee from %s through the flood: %v", from, err)
		}
		gossh.NewClient(sc, chans, reqs).Close()
	}
	if s := w.gate.stats(); s.Most > limits.perAddr || s.Total > limits.total {
		t.Errorf("the workshop holds %+v connections before the code, over its limits %+v", s, limits)
	}
}

// A connection that has not started the key exchange within kexStart is
// closed, whether it said nothing or only its version line; one past the
// start (at the code's prompt) is not, and its code then lets it in.
func TestConnectionThatDoesNotStartTheKeyExchangeIsClosed(t *testing.T) {
	w := startWorkshop(t, Config{preauth: &preauthLimits{perAddr: 16, total: 64, kexStart: 200 * time.Millisecond}})
	release := make(chan struct{})
	ada := atThePrompt(t, w, "127.0.0.1", testCode, release)
	silent := dialFrom(t, w, "127.0.0.2")
	slow := dialFrom(t, w, "127.0.0.2")
	if _, err := slow.Write([]byte("SSH-2.0-slow\r\n")); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]net.Conn{"silent": silent, "version only": slow} {
		r := bufio.NewReader(c)
		for { // the server's version line, then the end
			if _, err := r.ReadString('\n'); err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
					t.Errorf("%s: %v, want the connection closed", name, err)
				}
				break
			}
		}
	}
	close(release)
	if err := <-ada; err != nil {
		t.Errorf("the connection at the prompt, past the start of the key exchange: %v", err)
	}
	feedHas(t, w, "closed a connection from 127.0.0.2 that did not start the SSH key exchange within 200ms")
}

// Connections at the code's prompt are capped per address: past the cap
// a newcomer from that address is refused with a line, and the feed says
// so; an attendee elsewhere gets in. When strangers from several
// addresses fill the workshop's total, a newcomer from an address with
// fewer takes the place of one from the address with the most.
func TestConnectionsBeforeTheCodeAreCappedPerAddressAndShared(t *testing.T) {
	limits := preauthLimits{perAddr: 4, total: 10, kexStart: time.Hour}
	w := startWorkshop(t, Config{preauth: &limits})
	release := make(chan struct{})
	defer close(release)
	for range limits.perAddr {
		atThePrompt(t, w, "127.0.0.2", "guess", release)
	}
	if line := refusedWithALine(t, dialFrom(t, w, "127.0.0.2")); line != "learn workshop: too many connections are giving the join code at once; try again in a few seconds\r\n" {
		t.Errorf("the connection over its address's cap was told %q", line)
	}
	feedHas(t, w, "refused a connection from 127.0.0.2: 4 of its connections are giving the join code already, the most one address may have")
	if c, err := dial(w, "ada", nil, password(testCode)); err != nil {
		t.Errorf("an attendee from another address: %v", err)
	} else {
		c.Close()
	}

	// Two more strangers' addresses fill the total (4 + 4 + 2); each
	// newcomer with fewer than the most takes a place of theirs.
	for range limits.perAddr {
		atThePrompt(t, w, "127.0.0.3", "guess", release)
	}
	for range 2 {
		atThePrompt(t, w, "127.0.0.5", "guess", release)
	}
	if s := w.gate.stats(); s.Total != limits.total {
		t.Fatalf("the gate holds %+v, want the total %d", s, limits.total)
	}
	if c, err := dial(w, "ben", nil, password(testCode)); err != nil {
		t.Errorf("an attendee while strangers fill the total: %v", err)
	} else {
		c.Close()
	}
	if s := w.gate.stats(); s.Total > limits.total || s.Most > limits.perAddr {
		t.Errorf("the gate holds %+v, over %+v", s, limits)
	}
}

// The README's limits before the code, and its guessing sums, are the
// code's.
func TestTheREADMEsLimitsBeforeTheCodeAreTheCodes(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	l := preauthFor(DefaultMaxAttendees)
	guesses := float64(l.total) / wrongCodeDelay.Seconds() // a second, at most
	space := math.Pow(float64(len(codeAlphabet)), 8)
	years := space / 2 / guesses / (365.25 * 24 * 3600)
	perDay := 1 / (guesses * 86400 / space)
	big := preauthFor(1000)
	for _, want := range []string{
		fmt.Sprintf("at most twice the room from one address (%d for %d attendees", l.perAddr, DefaultMaxAttendees),
		fmt.Sprintf("and %d in all", l.total),
		fmt.Sprintf("within %d seconds, or it is closed", int(kexStart.Seconds())),
		fmt.Sprintf("answered after %d seconds, and one connection may give three", int(wrongCodeDelay.Seconds())),
		fmt.Sprintf("at most %d guesses a second", int(guesses)),
		fmt.Sprintf("one of %d⁸", len(codeAlphabet)),
		fmt.Sprintf("about %d years on average", int(years)),
		fmt.Sprintf("about 1 chance in %s", thousands(int(math.Round(perDay/1000))*1000)),
		fmt.Sprintf("allows %s a second", thousands(int(float64(big.total)/wrongCodeDelay.Seconds()))),
		fmt.Sprintf("one connection may have %s sessions open at once", []string{"", "one", "two", "three", "four"}[maxSessionsPerConn]),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
	if wrongPerConn != 3 {
		t.Errorf("one connection may give %d wrong codes; the README says three", wrongPerConn)
	}
}

// thousands is n with a comma every three digits: "77,000".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// pending sees bytes a client has sent that the server has not read yet,
// and none before it sends any.
func TestPendingSeesBytesNotReadYet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if pending(server) {
		t.Fatal("pending before the client sent anything")
	}
	if _, err := client.Write([]byte("SSH-2.0-x\r\n")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the client's bytes to wait in the socket", func() string { return strconv.FormatBool(pending(server)) },
		func(s string) bool { return s == "true" })
	var b [64]byte
	if n, err := server.Read(b[:]); err != nil || n != 11 {
		t.Fatalf("read %d, %v", n, err)
	}
	if pending(server) {
		t.Error("pending once every byte was read")
	}
}
