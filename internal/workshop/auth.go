package workshop

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/time/rate"
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

// Wrong codes: each address may give wrongCodeBurst of them at once and
// one more every wrongCodeEvery; past that, every attempt from it is
// refused, the right code too, until it has waited.
const (
	wrongCodeBurst = 10
	wrongCodeEvery = 6 * time.Second
	maxAddresses   = 4096 // addresses remembered; the oldest are forgotten first
)

// auth checks join codes and remembers the keys of those who gave one.
type auth struct {
	digest [sha256.Size]byte // of the normalized code

	mu      sync.Mutex
	trusted map[string]bool // marshalled public keys
	wrong   map[string]*rate.Limiter
	order   []string // addresses of wrong, oldest first
	now     func() time.Time
	logf    func(format string, args ...any) // told of wrong codes; may be nil
	// authed is told of every connection that got in, with its context;
	// may be nil.
	authed func(ctx ssh.Context, conn gossh.ConnMetadata)
}

func newAuth(code string) *auth {
	return &auth{digest: sha256.Sum256([]byte(normalize(code))), trusted: map[string]bool{}, wrong: map[string]*rate.Limiter{}, now: time.Now}
}

var errDenied = errors.New("permission denied")

// wrongPerConn is how many wrong codes one connection may give: past
// them it is refused without counting more against its address, so one
// client that retries on its own (a script answering every prompt) does
// not lock out everyone behind that address.
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
// more may come from the address before it must wait; or, when wait is
// more than 0, any code, since the address must wait that long first.
type codeError struct {
	wrong bool
	left  int
	wait  time.Duration
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
	wait := fmt.Sprintf("too many wrong join codes from your address: wait %s, then try again", seconds(e.wait))
	switch {
	case e.empty:
		return "no join code given: run ssh from a terminal and type the code the presenter gives at the prompt"
	case e.spent && e.wrong:
		return fmt.Sprintf("that is not the join code either: %d wrong in this connection; ask the presenter for the code, then connect again", wrongPerConn)
	case e.spent:
		return fmt.Sprintf("%d wrong join codes in this connection: ask the presenter for the code, then connect again", wrongPerConn)
	case e.wrong && e.wait > 0:
		return "that is not the join code, and " + wait
	case e.wait > 0:
		return wait
	}
	return fmt.Sprintf("that is not the join code: ask the presenter for it (%s left before a wait)", tries(e.left))
}

// short is note for the prompt itself, which OpenSSH shows whatever its
// LogLevel (it shows an instruction or a banner only at INFO and above).
func (e *codeError) short() string {
	switch {
	case e.empty:
		return "no code given"
	case e.spent:
		return "too many wrong codes: connect again"
	case e.wait > 0:
		return fmt.Sprintf("wait %s: too many wrong codes from your address", seconds(e.wait))
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

// seconds is d in whole seconds, rounded up, in words: "1 second".
func seconds(d time.Duration) string {
	n := int(math.Ceil(d.Seconds()))
	if n == 1 {
		return "1 second"
	}
	return fmt.Sprintf("%d seconds", n)
}

// tries is n tries in words: "1 try", "9 tries".
func tries(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

// check says whether given is the join code, in constant time (the
// digests are compared, so the length of the code does not show either),
// and counts a wrong one against addr and c; nil when it is. Nothing
// given (only spaces) is not a wrong code: it is refused uncounted. Once c
// gave wrongPerConn wrong codes, every code from it is refused uncounted.
func (a *auth) check(addr net.Addr, c *connTries, given string) *codeError {
	if _, wait := a.standing(addr); wait > 0 {
		return &codeError{wait: wait}
	}
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
	left, wait := a.countWrong(addr)
	if a.logf != nil {
		if wait > 0 {
			a.logf("%s gave %d wrong join codes: refused for a while", host(addr), wrongCodeBurst)
		} else {
			a.logf("a wrong join code from %s", host(addr))
		}
	}
	return &codeError{wrong: true, left: left, wait: wait, spent: c.wrong >= wrongPerConn}
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

// standing is how many more wrong codes addr may give before it must
// wait and, when none, how long it must wait.
func (a *auth) standing(addr net.Addr) (left int, wait time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l, ok := a.wrong[host(addr)]
	if !ok {
		return wrongCodeBurst, 0
	}
	return standingOf(l, a.now())
}

func standingOf(l *rate.Limiter, now time.Time) (left int, wait time.Duration) {
	tokens := l.TokensAt(now)
	if tokens >= 1 {
		return int(tokens), 0
	}
	return 0, time.Duration((1 - tokens) * float64(wrongCodeEvery))
}

// countWrong counts a wrong code from addr; it returns addr's standing
// after it.
func (a *auth) countWrong(addr net.Addr) (left int, wait time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := host(addr)
	l, ok := a.wrong[h]
	if !ok {
		if len(a.order) >= maxAddresses {
			delete(a.wrong, a.order[0])
			a.order = a.order[1:]
		}
		l = rate.NewLimiter(rate.Every(wrongCodeEvery), wrongCodeBurst)
		a.wrong[h], a.order = l, append(a.order, h)
	}
	now := a.now()
	l.AllowN(now, 1)
	return standingOf(l, now)
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
	if err := a.check(conn.RemoteAddr(), c, given); err != nil {
		return err
	}
	if key != nil {
		a.trust(key)
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
// without a terminal answers every prompt with nothing. An address that
// must wait is told so before it types anything; the code typed once the
// wait is over lets it in.
func (a *auth) interactive(ctx ssh.Context, c *connTries, key gossh.PublicKey) func(gossh.ConnMetadata, gossh.KeyboardInteractiveChallenge) (*gossh.Permissions, error) {
	return func(conn gossh.ConnMetadata, ask gossh.KeyboardInteractiveChallenge) (*gossh.Permissions, error) {
		var refused *codeError
		if _, wait := a.standing(conn.RemoteAddr()); wait > 0 {
			refused = &codeError{wait: wait}
		}
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
	// trusted before lets it in, and any other must add the code.
	cfg.PublicKeyCallback = func(conn gossh.ConnMetadata, _ gossh.PublicKey) (*gossh.Permissions, error) {
		if _, wait := a.standing(conn.RemoteAddr()); wait > 0 {
			refused := &codeError{wait: wait}
			return nil, &gossh.BannerError{Err: refused, Message: refused.banner()}
		}
		return nil, nil
	}
	cfg.VerifiedPublicKeyCallback = func(conn gossh.ConnMetadata, key gossh.PublicKey, perms *gossh.Permissions, _ string) (*gossh.Permissions, error) {
		if a.isTrusted(key) {
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
