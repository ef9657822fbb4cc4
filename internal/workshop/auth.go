package workshop

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// How attendees get in. Everyone gives the join code at the password
// prompt (keyboard-interactive, or password for clients that only do
// that), compared in constant time. A public key is accepted on its own
// once its holder has proved it (signed with it) and given the code in
// the same connection: the next connection needs no code. The keys are
// trusted for this workshop only, in memory.

// codeAlphabet leaves out the letters and digits that read alike (0 O 1 l
// I): a code is read aloud or off a slide.
const codeAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// NewCode is a join code of two groups of four, such as "kq7m-3hxt": about
// 39 bits, from crypto/rand.
func NewCode() string {
	var b strings.Builder
	for i := range 8 {
		if i == 4 {
			b.WriteByte('-')
		}
		b.WriteByte(codeAlphabet[randN(len(codeAlphabet))])
	}
	return b.String()
}

// randN is a uniform number in [0, n) from crypto/rand.
func randN(n int) int {
	var buf [1]byte
	limit := 256 - 256%n
	for {
		if _, err := rand.Read(buf[:]); err != nil {
			panic(err) // crypto/rand.Read never fails (Go 1.24+)
		}
		if int(buf[0]) < limit {
			return int(buf[0]) % n
		}
	}
}

// normalize is a code as typed, without the differences that do not
// count: case and surrounding spaces.
func normalize(code string) string { return strings.ToLower(strings.TrimSpace(code)) }

// Wrong codes cost time, never a lockout: each is answered only after
// wrongCodeDelay, and one connection may give wrongPerConn of them. The
// right code is answered at once, whatever came before it from the same
// address, and a key that gave it before is let in without it: no
// stranger's guesses can keep out an attendee behind the same NAT or load
// balancer. Guessing stays infeasible because the connections that may
// be at the prompt at once are bounded (preauth.go): at most
// preauthTotal connections, each with one answer every wrongCodeDelay.
const wrongCodeDelay = 2 * time.Second

// auth checks join codes and remembers the keys of those who gave one.
type auth struct {
	digest [sha256.Size]byte // of the normalized code

	mu      sync.Mutex
	trusted map[string]bool                  // marshalled public keys
	wrongBy map[string]int                   // wrong codes by address, for the feed
	order   []string                         // addresses of wrongBy, oldest first
	logf    func(format string, args ...any) // told of wrong codes; may be nil
	// authed is told of every connection that got in, with its context;
	// may be nil.
	authed func(ctx ssh.Context, conn gossh.ConnMetadata)
	// wait waits d before a wrong code is answered, or until ctx ends
	// (the connection is gone); replaced in tests.
	wait func(ctx context.Context, d time.Duration)
}

// maxAddresses is how many addresses the feed's count of wrong codes
// remembers; the oldest are forgotten first.
const maxAddresses = 4096

func newAuth(code string) *auth {
	return &auth{digest: sha256.Sum256([]byte(normalize(code))), trusted: map[string]bool{}, wrongBy: map[string]int{}, wait: sleep}
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

var errDenied = errors.New("permission denied")

// wrongPerConn is how many wrong codes one connection may give: past
// them it is refused, and must connect again (a new key exchange) to try
// more.
const wrongPerConn = 3

// connTries is one connection's record of its tries: the wrong codes it
// gave, and whether it was told it gave none (once is enough: a client
// without a terminal tries every method it has).
type connTries struct {
	wrong     int
	toldEmpty bool
}

// refusal is the error that refuses a code: with the banner that says
// why, but only once for no code given.
func (c *connTries) refusal(e *codeError) error {
	if e.empty {
		if c.toldEmpty {
			return e
		}
		c.toldEmpty = true
	}
	return &gossh.BannerError{Err: e, Message: e.banner()}
}

// codeError is a join code refused: a wrong one (wrong), after which left
// more may come in this connection.
type codeError struct {
	wrong bool
	left  int
	// empty: no code was given at all (a client without a terminal
	// answers the prompt with nothing); not counted.
	empty bool
	// spent: the connection gave wrongPerConn wrong codes already.
	spent bool
}

func (e *codeError) Error() string { return errDenied.Error() + ": " + e.note() }

func (e *codeError) Unwrap() error { return errDenied }

// note says what happened and what to do, for the instruction of the next
// prompt (keyboard-interactive) or a banner (password).
func (e *codeError) note() string {
	switch {
	case e.empty:
		return "no join code given: run ssh from a terminal and type the code the presenter gives at the prompt"
	case e.spent && e.wrong:
		return fmt.Sprintf("that is not the join code either: %d wrong in this connection; ask the presenter for the code, then connect again", wrongPerConn)
	case e.spent:
		return fmt.Sprintf("%d wrong join codes in this connection: ask the presenter for the code, then connect again", wrongPerConn)
	}
	return fmt.Sprintf("that is not the join code: ask the presenter for it (%s left in this connection)", tries(e.left))
}

// short is note for the prompt itself, which OpenSSH shows whatever its
// LogLevel (it shows an instruction or a banner only at INFO and above).
func (e *codeError) short() string {
	switch {
	case e.empty:
		return "no code given"
	case e.spent:
		return "too many wrong codes: connect again"
	default:
		return fmt.Sprintf("that was not it; %s left", tries(e.left))
	}
}

// banner is note as the line ssh prints before its next prompt; the
// password prompt OpenSSH falls back to takes the code too.
func (e *codeError) banner() string {
	if e.spent || e.empty {
		return "learn workshop: " + e.note() + "\n"
	}
	return "learn workshop: " + e.note() + "; the join code works at a password prompt too\n"
}

// tries is n tries in words: "1 try", "2 tries".
func tries(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

// check says whether given is the join code, in constant time (the
// digests are compared, so the length of the code does not show either);
// nil when it is, at once. A wrong code is counted against c and answered
// after wrongCodeDelay (sooner only if ctx ends: the connection is gone).
// Nothing given (only spaces) is not a wrong code: it is refused
// uncounted, at once. Once c gave wrongPerConn wrong codes, every code
// from it is refused.
func (a *auth) check(ctx context.Context, addr net.Addr, c *connTries, given string) *codeError {
	if c.wrong >= wrongPerConn {
		return &codeError{spent: true}
	}
	if normalize(given) == "" {
		return &codeError{empty: true}
	}
	d := sha256.Sum256([]byte(normalize(given)))
	if subtle.ConstantTimeCompare(d[:], a.digest[:]) == 1 {
		return nil
	}
	c.wrong++
	a.countWrong(addr)
	a.wait(ctx, wrongCodeDelay)
	return &codeError{wrong: true, left: wrongPerConn - c.wrong, spent: c.wrong >= wrongPerConn}
}

func host(addr net.Addr) string {
	if t, ok := addr.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	if h, _, err := net.SplitHostPort(addr.String()); err == nil {
		return h
	}
	return addr.String()
}

// countWrong counts a wrong code from addr, and tells logf of the first
// from it and of every tenfold after (10, 100, …): a stream of guesses
// does not flood the presenter's feed.
func (a *auth) countWrong(addr net.Addr) {
	a.mu.Lock()
	h := host(addr)
	n, ok := a.wrongBy[h]
	if !ok {
		if len(a.order) >= maxAddresses {
			delete(a.wrongBy, a.order[0])
			a.order = a.order[1:]
		}
		a.order = append(a.order, h)
	}
	n++
	a.wrongBy[h] = n
	a.mu.Unlock()
	if a.logf == nil {
		return
	}
	switch {
	case n == 1:
		a.logf("a wrong join code from %s", h)
	case isPowerOfTen(n):
		a.logf("%d wrong join codes from %s so far (each answered after %s; the right code still lets in at once)", n, h, wrongCodeDelay)
	}
}

func isPowerOfTen(n int) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}

func (a *auth) isTrusted(key gossh.PublicKey) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.trusted[string(key.Marshal())]
}

func (a *auth) trust(key gossh.PublicKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.trusted[string(key.Marshal())] = true
}

// password is the password callback: the code; a key proved before in
// the same connection (nil if none) is trusted from then on. A code
// refused is told in a banner.
func (a *auth) password(ctx ssh.Context, c *connTries, key gossh.PublicKey) func(gossh.ConnMetadata, []byte) (*gossh.Permissions, error) {
	return func(conn gossh.ConnMetadata, pw []byte) (*gossh.Permissions, error) {
		if err := a.accept(ctx, conn, c, string(pw), key); err != nil {
			return nil, c.refusal(err)
		}
		return nil, nil
	}
}

// accept checks the code given in conn and trusts key (nil if none) once
// the code is right: the connection has got in.
func (a *auth) accept(ctx ssh.Context, conn gossh.ConnMetadata, c *connTries, given string, key gossh.PublicKey) *codeError {
	if err := a.check(ctx, conn.RemoteAddr(), c, given); err != nil {
		return err
	}
	if key != nil {
		a.trust(key)
		setPerson(ctx, key)
	}
	a.in(ctx, conn)
	return nil
}

// in tells authed that the connection of ctx got in.
func (a *auth) in(ctx ssh.Context, conn gossh.ConnMetadata) {
	if a.authed != nil {
		a.authed(ctx, conn)
	}
}

// maxAsks bounds the prompts of one keyboard-interactive attempt.
const maxAsks = wrongPerConn + 1

const codePrompt = "learn workshop join code: "

// interactive asks for the code at a prompt of its own, again after a
// wrong code (up to maxAsks times, while the connection may still give
// one), the refusal said in the next prompt's instruction and, in short,
// in the prompt itself. No code given ends the attempt at once: a client
// without a terminal answers every prompt with nothing.
func (a *auth) interactive(ctx ssh.Context, c *connTries, key gossh.PublicKey) func(gossh.ConnMetadata, gossh.KeyboardInteractiveChallenge) (*gossh.Permissions, error) {
	return func(conn gossh.ConnMetadata, ask gossh.KeyboardInteractiveChallenge) (*gossh.Permissions, error) {
		var refused *codeError
		for range maxAsks {
			instruction, prompt := "", codePrompt
			if refused != nil {
				instruction = "learn workshop: " + refused.note()
				prompt = "learn workshop join code (" + refused.short() + "): "
			}
			answers, err := ask("", instruction, []string{prompt}, []bool{false})
			if err != nil {
				return nil, err
			}
			if len(answers) != 1 {
				return nil, errDenied
			}
			if refused = a.accept(ctx, conn, c, answers[0], key); refused == nil {
				return nil, nil
			}
			if refused.empty || refused.spent {
				break
			}
		}
		return nil, c.refusal(refused)
	}
}

// serverConfig is the SSH server's authentication for one connection.
func (a *auth) serverConfig(ctx ssh.Context) *gossh.ServerConfig {
	cfg := &gossh.ServerConfig{MaxAuthTries: 6}
	c := &connTries{} // the callbacks of one connection run one at a time
	cfg.PasswordCallback = a.password(ctx, c, nil)
	cfg.KeyboardInteractiveCallback = a.interactive(ctx, c, nil)
	// Any key may be offered; once the client has signed with it, a key
	// trusted before lets it in, whatever its address did, and any other
	// must add the code.
	cfg.PublicKeyCallback = func(gossh.ConnMetadata, gossh.PublicKey) (*gossh.Permissions, error) {
		return nil, nil
	}
	cfg.VerifiedPublicKeyCallback = func(conn gossh.ConnMetadata, key gossh.PublicKey, perms *gossh.Permissions, _ string) (*gossh.Permissions, error) {
		if a.isTrusted(key) {
			setPerson(ctx, key)
			a.in(ctx, conn)
			return perms, nil
		}
		return nil, &gossh.PartialSuccessError{Next: gossh.ServerAuthCallbacks{
			PasswordCallback:            a.password(ctx, c, key),
			KeyboardInteractiveCallback: a.interactive(ctx, c, key),
		}}
	}
	return cfg
}
