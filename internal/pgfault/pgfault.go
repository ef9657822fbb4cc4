// Package pgfault breaks one step of a conversation with a real PostgreSQL
// on purpose, for tests of code that must clean up when a step fails. It is
// a TCP proxy on loopback in front of the real server: it forwards every
// byte both ways, reads the client's messages as it forwards them, and
// when the rule's step comes (the n-th connection starts, or a query holding
// a given text is sent) it drops the connection or cancels the caller's
// context there. Everything else the server answers is the server's own:
// nothing is mocked.
package pgfault

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Action is what the proxy does at the rule's step.
type Action int

const (
	// Drop closes both sides of the connection before the step's message
	// reaches the server: the client sees the connection die.
	Drop Action = iota + 1
	// Cancel calls Rule.Cancel and swallows the step's message (it never
	// reaches the server, so its answer never comes): the caller's context
	// ends exactly while that step is under way.
	Cancel
	// CancelAfterAnswer lets the step reach the server, which carries it
	// out and answers; the proxy keeps that answer (and everything after
	// it on the connection) from the client and calls Rule.Cancel once
	// the server has answered: the step is done, and the caller cannot
	// know it.
	CancelAfterAnswer
)

func (a Action) String() string {
	switch a {
	case Drop:
		return "dropped connection"
	case Cancel:
		return "cancelled context"
	case CancelAfterAnswer:
		return "answer withheld, then cancelled context"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Rule says where the proxy breaks the conversation. With Match set, the
// first message of any connection that sends a query (simple or extended
// protocol) containing Match is the step; with Match empty, the start of
// connection number Conn (1-based, in the order they reach the proxy) is.
// The rule fires once.
type Rule struct {
	Match  string
	Conn   int
	Action Action
	Cancel context.CancelFunc // for Cancel
}

// Proxy is a running proxy. Close it (Start registers that with the test).
type Proxy struct {
	ln      net.Listener
	network string
	target  string
	rule    Rule

	conns atomic.Int64
	fired atomic.Bool
	wg    sync.WaitGroup

	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
}

// Start starts a proxy in front of the server connString names (keyword/
// value or URL form, TCP or Unix socket) that breaks the step rule names.
// It is closed, and its goroutines waited for, when the test ends.
func Start(t testing.TB, connString string, rule Rule) *Proxy {
	t.Helper()
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		t.Fatalf("pgfault: %v", err)
	}
	network, target := "tcp", net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	if strings.HasPrefix(cfg.Host, "/") {
		network, target = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgfault: %v", err)
	}
	p := &Proxy{ln: ln, network: network, target: target, rule: rule, open: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.Close)
	return p
}

// ConnString is connString (as given to Start, or one of the same server,
// such as a schema's) pointed at the proxy: the same user, password,
// database and run-time parameters (search_path included), over TCP to the
// proxy, without TLS.
func (p *Proxy) ConnString(connString string) (string, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return "", err
	}
	host, port, _ := net.SplitHostPort(p.ln.Addr().String())
	kv := map[string]string{"host": host, "port": port, "user": cfg.User, "dbname": cfg.Database, "sslmode": "disable"}
	if cfg.Password != "" {
		kv["password"] = cfg.Password
	}
	for k, v := range cfg.RuntimeParams {
		kv[k] = v
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s='%s' ", k, strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(kv[k]))
	}
	return strings.TrimSpace(b.String()), nil
}

// Fired reports whether the rule's step came and the proxy broke it.
func (p *Proxy) Fired() bool { return p.fired.Load() }

// Close stops the proxy, closes every connection through it and waits for
// its goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.ln.Close()
		for c := range p.open {
			c.Close()
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.open[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.open, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(client) {
			return
		}
		p.wg.Go(func() { p.serve(client) })
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.untrack(client)
	server, err := net.Dial(p.network, p.target)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	var mute atomic.Bool // the server's answers stop reaching the client
	p.wg.Go(func() {
		p.relay(client, server, &mute)
		client.Close()
	})
	p.forward(client, server, &mute)
}

// relay copies the server's messages to the client until mute is set;
// from then on it drops them, and calls Rule.Cancel at the first
// ReadyForQuery: the server has answered the step.
func (p *Proxy) relay(client, server net.Conn, mute *atomic.Bool) {
	cancelled := false
	for {
		var head [5]byte
		if _, err := io.ReadFull(server, head[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[1:])) - 4
		if n < 0 || n > 1<<26 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(server, body); err != nil {
			return
		}
		if mute.Load() {
			if head[0] == 'Z' && !cancelled {
				cancelled = true
				p.rule.Cancel()
			}
			continue
		}
		if _, err := client.Write(append(head[:], body...)); err != nil {
			return
		}
	}
}

// forward copies the client's messages to the server one by one, and
// breaks the rule's step.
func (p *Proxy) forward(client, server net.Conn, mute *atomic.Bool) {
	started, holding := false, false
	for {
		var typ byte
		if started {
			var t [1]byte
			if _, err := io.ReadFull(client, t[:]); err != nil {
				return
			}
			typ = t[0]
		}
		var l [4]byte
		if _, err := io.ReadFull(client, l[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(l[:])) - 4
		if n < 0 || n > 1<<26 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(client, body); err != nil {
			return
		}
		if holding && typ != 'X' {
			continue // the held step's messages; a Terminate goes through
		}
		step := false
		if !started && len(body) >= 4 && binary.BigEndian.Uint32(body) == 196608 { // StartupMessage, protocol 3.0
			started = true
			nth := p.conns.Add(1)
			step = p.rule.Match == "" && int(nth) == p.rule.Conn
		}
		if started && (typ == 'Q' || typ == 'P') && p.rule.Match != "" {
			step = strings.Contains(string(body), p.rule.Match)
		}
		if step && p.fired.CompareAndSwap(false, true) {
			switch p.rule.Action {
			case Drop:
				return
			case Cancel:
				// The step's messages never reach the server (the rest
				// of an extended-protocol query too): the client waits
				// for an answer until the cancelled context ends the
				// wait. Its Terminate then goes through.
				p.rule.Cancel()
				holding = true
				continue
			case CancelAfterAnswer:
				mute.Store(true) // before the step can be answered
			}
		}
		msg := make([]byte, 0, 5+n)
		if typ != 0 {
			msg = append(msg, typ)
		}
		msg = append(append(msg, l[:]...), body...)
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

// ErrNotFired is what Check returns when the rule's step never came: the
// test did not break what it meant to.
var ErrNotFired = errors.New("pgfault: the rule's step never came")

// Check returns ErrNotFired unless the rule fired.
func (p *Proxy) Check() error {
	if !p.Fired() {
		return ErrNotFired
	}
	return nil
}
