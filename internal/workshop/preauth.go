package workshop

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// Connections before the join code. Every connection counts from its
// accept until it has authenticated (or closed), per address and in all,
// and goes through two stages:
//
//   - the start of the key exchange: the client's version line and its
//     first packet (its KEXINIT), which a client sends by itself within a
//     round trip. A connection that has not sent them within kexStart (a
//     few seconds) is closed, and while it has not it is the first to
//     give way to a newcomer, one that has sent nothing at all before
//     any other: a flood of TCP connections that say nothing holds
//     nobody out, from any address, the flooder's own included.
//   - the rest of the handshake, where a person may be answering: the
//     host key question of a first connection, the join code. The
//     library's handshakeTimeout (OpenSSH's LoginGraceTime) bounds it.
//
// The limits: one address may have perAddr connections before the code
// (twice the room, which behind one NAT or load balancer may join at
// once); all of them together total. At its address's limit a newcomer
// takes the place of that address's oldest connection still starting.
// At the total it takes the place of the oldest connection (still
// starting first) of the address that has the most, when that address
// has more than the newcomer's would; else of the oldest still starting
// of an address with at least as many as the newcomer's. So strangers
// elsewhere, however many, cannot hold an attendee out, and a connection
// still starting always gives way. A newcomer is refused only when every
// place it could take is past the start of the key exchange: its own
// address has perAddr such, or the total is made of addresses with no
// more than its own.
// The connection refused is told so in a line (before any SSH version, as
// RFC 4253 lets a server), then closed; the feed says so, once per
// address and then every tenfold.

// kexStart bounds the start of the key exchange (the client's version
// line and first packet, which need no person).
const kexStart = 5 * time.Second

// preauthLimits are the limits on connections before the join code.
type preauthLimits struct {
	perAddr, total int
	kexStart       time.Duration
}

// preauthFor is the limits for a room of attendees.
func preauthFor(attendees int) preauthLimits {
	per := max(16, 2*attendees)
	return preauthLimits{perAddr: per, total: max(256, 2*per), kexStart: kexStart}
}

// gate holds the connections that have not authenticated yet.
type gate struct {
	limits preauthLimits
	logf   func(format string, args ...any) // the feed; may be nil

	mu      sync.Mutex
	byAddr  map[string][]*gated // oldest first
	n       int
	seq     uint64         // of the last connection admitted
	refused map[string]int // refusals by address and reason, for the feed
}

func newGate(l preauthLimits, logf func(string, ...any)) *gate {
	return &gate{limits: l, logf: logf, byAddr: map[string][]*gated{}, refused: map[string]int{}}
}

// gated is one connection before the join code, as the server reads it.
type gated struct {
	net.Conn
	g     *gate
	addr  string
	seq   uint64      // the order it came in
	timer *time.Timer // closes it when the key exchange has not started in time

	mu      sync.Mutex
	sniff   kexSniffer
	said    bool // it has sent something
	started bool // the key exchange has started
	out     bool // it has left the gate (authenticated or closed)
}

// preauthStats is what the gate holds now: connections before the join
// code, in all and from the address that has the most.
type preauthStats struct{ Total, Most int }

func (g *gate) stats() preauthStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := preauthStats{Total: g.n}
	for _, cs := range g.byAddr {
		s.Most = max(s.Most, len(cs))
	}
	return s
}

// admit lets c in, or refuses it (false: the caller closes it). A
// connection that makes room for it is closed here.
func (g *gate) admit(c net.Conn) (*gated, bool) {
	addr := host(c.RemoteAddr())
	g.mu.Lock()
	g.seq++
	gc := &gated{Conn: c, g: g, addr: addr, seq: g.seq}
	var victim *gated
	mine := g.byAddr[addr]
	switch {
	case len(mine) >= g.limits.perAddr:
		victim = oldestStarting(mine)
		if victim == nil {
			g.mu.Unlock()
			g.tell(addr, "perAddr", "refused a connection from %s: %d of its connections are giving the join code already, the most one address may have", addr, len(mine))
			return nil, false
		}
	case g.n >= g.limits.total:
		var most []*gated
		for _, cs := range g.byAddr {
			if len(cs) > len(most) {
				most = cs
			}
		}
		if len(most) > len(mine)+1 { // that address has more than its share
			if victim = oldestStarting(most); victim == nil {
				victim = most[0]
			}
			break
		}
		// Else a connection still starting, of an address that has at
		// least as many as the newcomer's.
		for _, cs := range g.byAddr {
			if len(cs) < len(mine) {
				continue
			}
			if v := oldestStarting(cs); v != nil && (victim == nil || v.seq < victim.seq) {
				victim = v
			}
		}
		if victim == nil {
			g.mu.Unlock()
			g.tell(addr, "total", "refused a connection from %s: %d connections are giving the join code, the most the workshop takes", addr, g.n)
			return nil, false
		}
	}
	if victim != nil {
		g.removeLocked(victim)
	}
	gc.timer = time.AfterFunc(g.limits.kexStart, func() {
		gc.mu.Lock()
		slow := !gc.started && !gc.out
		gc.mu.Unlock()
		if slow {
			g.tell(gc.addr, "slow", "closed a connection from %s that did not start the SSH key exchange within %s", gc.addr, g.limits.kexStart)
			_ = gc.Close()
		}
	})
	g.byAddr[addr] = append(g.byAddr[addr], gc)
	g.n++
	g.mu.Unlock()
	if victim != nil {
		_ = victim.Conn.Close()
	}
	return gc, true
}

// oldestStarting is the connection of cs to give way first: the oldest
// that has sent nothing yet, else the oldest whose key exchange has not
// started; nil when every one has started. A client sends its version
// line as soon as it has connected, so a flood of connections that say
// nothing gives way before any client.
func oldestStarting(cs []*gated) *gated {
	var starting *gated
	for _, c := range cs {
		c.mu.Lock()
		started, said := c.started, c.said
		c.mu.Unlock()
		if !said && pending(c.Conn) { // its bytes are in, not read yet
			c.mu.Lock()
			c.said = true
			c.mu.Unlock()
			said = true
		}
		switch {
		case !said:
			return c
		case !started && starting == nil:
			starting = c
		}
	}
	return starting
}

// removeLocked takes c out of the gate's count (once).
func (g *gate) removeLocked(c *gated) {
	c.mu.Lock()
	out := c.out
	c.out = true
	c.mu.Unlock()
	if out {
		return
	}
	cs := g.byAddr[c.addr]
	for i, o := range cs {
		if o == c {
			cs = append(cs[:i:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(g.byAddr, c.addr)
	} else {
		g.byAddr[c.addr] = cs
	}
	g.n--
}

// leave takes c out of the gate: it has authenticated, or closed.
func (g *gate) leave(c *gated) {
	if c.timer != nil {
		c.timer.Stop()
	}
	g.mu.Lock()
	g.removeLocked(c)
	g.mu.Unlock()
}

// tell says a refusal in the feed: the first of its kind from an address,
// then every tenfold.
func (g *gate) tell(addr, reason, format string, args ...any) {
	if g.logf == nil {
		return
	}
	g.mu.Lock()
	k := addr + " " + reason
	if len(g.refused) >= maxAddresses {
		clear(g.refused)
	}
	g.refused[k]++
	n := g.refused[k]
	g.mu.Unlock()
	switch {
	case n == 1:
		g.logf(format, args...)
	case isPowerOfTen(n):
		g.logf(format+" (%d such so far)", append(args, n)...)
	}
}

// Read reads the client's bytes and, until the key exchange has started,
// watches for its start.
func (c *gated) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.said = c.said || n > 0
	if !c.started && c.sniff.feed(p[:n]) {
		c.started = true
		if c.timer != nil {
			c.timer.Stop()
		}
	}
	c.mu.Unlock()
	return n, err
}

// Close closes the connection and takes it out of the gate.
func (c *gated) Close() error {
	c.g.leave(c)
	return c.Conn.Close()
}

// authenticated takes the connection out of the gate: past the join code,
// the room's limits apply.
func (c *gated) authenticated() { c.g.leave(c) }

// refuse tells a connection refused at the gate why, in a line before any
// SSH version (RFC 4253, 4.2), and closes it.
func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = c.Write([]byte("learn workshop: too many connections are giving the join code at once; try again in a few seconds\r\n"))
	_ = c.Close()
}

// gateListener admits every connection it accepts through its gate, and
// closes at once, with a line, those the gate refuses.
type gateListener struct {
	net.Listener
	g *gate
}

func (l *gateListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if gc, ok := l.g.admit(c); ok {
			return gc, nil
		}
		refuse(c)
	}
}

// kexSniffer follows the first bytes a client sends until its key
// exchange has started: the version line (RFC 4253, 4.2: a line that
// begins with "SSH-"; other lines before it are skipped) and the first
// binary packet after it (its KEXINIT, 7.1), unencrypted.
type kexSniffer struct {
	versioned bool    // the version line is in
	line      [4]byte // the start of the current line
	lineN     int
	hdr       [4]byte // the packet's length, as read so far
	hdrN      int
	left      uint32 // bytes of the packet still to come, once its length is in
	inPacket  bool
}

// feed takes the next bytes; it reports whether the version line and one
// whole packet have come.
func (s *kexSniffer) feed(p []byte) bool {
	for len(p) > 0 {
		if !s.versioned {
			b := p[0]
			p = p[1:]
			if s.lineN < len(s.line) {
				s.line[s.lineN] = b
			}
			s.lineN++
			if b == '\n' {
				s.versioned = s.lineN > 4 && string(s.line[:]) == "SSH-"
				s.lineN = 0
			}
			continue
		}
		if !s.inPacket {
			k := copy(s.hdr[s.hdrN:], p)
			s.hdrN += k
			p = p[k:]
			if s.hdrN < len(s.hdr) {
				return false
			}
			s.left, s.inPacket = binary.BigEndian.Uint32(s.hdr[:]), true
			if s.left == 0 {
				return true
			}
			continue
		}
		k := min(uint32(len(p)), s.left)
		s.left -= k
		p = p[k:]
		if s.left == 0 {
			return true
		}
	}
	return false
}
