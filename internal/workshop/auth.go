package workshop

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
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
}

func newAuth(code string) *auth {
	return &auth{digest: sha256.Sum256([]byte(normalize(code))), trusted: map[string]bool{}, wrong: map[string]*rate.Limiter{}, now: time.Now}
}

// The messages an attendee's ssh prints (as a banner) when they cannot get
// in; each says what to do.
const (
	msgWrongCode = "learn workshop: that is not the join code; ask the presenter for it\n"
	msgTooMany   = "learn workshop: too many wrong join codes from your address; wait a minute, then try again\n"
)

var errDenied = errors.New("permission denied")

// check says whether given is the join code, in constant time (the
// digests are compared, so the length of the code does not show either),
// and counts a wrong one against addr.
func (a *auth) check(addr net.Addr, given string) error {
	if a.blocked(addr) {
		return &gossh.BannerError{Err: errDenied, Message: msgTooMany}
	}
	d := sha256.Sum256([]byte(normalize(given)))
	if subtle.ConstantTimeCompare(d[:], a.digest[:]) == 1 {
		return nil
	}
	if a.countWrong(addr) && a.logf != nil {
		a.logf("%s gave %d wrong join codes: refused for a while", host(addr), wrongCodeBurst)
	} else if a.logf != nil {
		a.logf("a wrong join code from %s", host(addr))
	}
	return &gossh.BannerError{Err: errDenied, Message: msgWrongCode}
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

// blocked says whether addr has given too many wrong codes lately.
func (a *auth) blocked(addr net.Addr) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	l, ok := a.wrong[host(addr)]
	return ok && l.TokensAt(a.now()) < 1
}

// countWrong counts a wrong code from addr; it reports whether addr is
// blocked from now on.
func (a *auth) countWrong(addr net.Addr) bool {
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
	l.AllowN(a.now(), 1)
	return l.TokensAt(a.now()) < 1
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
// the same connection (nil if none) is trusted from then on.
func (a *auth) password(key gossh.PublicKey) func(gossh.ConnMetadata, []byte) (*gossh.Permissions, error) {
	return func(conn gossh.ConnMetadata, pw []byte) (*gossh.Permissions, error) {
		if err := a.check(conn.RemoteAddr(), string(pw)); err != nil {
			return nil, err
		}
		if key != nil {
			a.trust(key)
		}
		return nil, nil
	}
}

// interactive asks for the code at a prompt of its own.
func (a *auth) interactive(key gossh.PublicKey) func(gossh.ConnMetadata, gossh.KeyboardInteractiveChallenge) (*gossh.Permissions, error) {
	pw := a.password(key)
	return func(conn gossh.ConnMetadata, ask gossh.KeyboardInteractiveChallenge) (*gossh.Permissions, error) {
		answers, err := ask("", "", []string{"learn workshop join code: "}, []bool{false})
		if err != nil {
			return nil, err
		}
		if len(answers) != 1 {
			return nil, errDenied
		}
		return pw(conn, []byte(answers[0]))
	}
}

// serverConfig is the SSH server's authentication for one connection.
func (a *auth) serverConfig(ssh.Context) *gossh.ServerConfig {
	cfg := &gossh.ServerConfig{MaxAuthTries: 6}
	cfg.PasswordCallback = a.password(nil)
	cfg.KeyboardInteractiveCallback = a.interactive(nil)
	// Any key may be offered; once the client has signed with it, a key
	// trusted before lets it in, and any other must add the code.
	cfg.PublicKeyCallback = func(conn gossh.ConnMetadata, _ gossh.PublicKey) (*gossh.Permissions, error) {
		if a.blocked(conn.RemoteAddr()) {
			return nil, &gossh.BannerError{Err: errDenied, Message: msgTooMany}
		}
		return nil, nil
	}
	cfg.VerifiedPublicKeyCallback = func(_ gossh.ConnMetadata, key gossh.PublicKey, perms *gossh.Permissions, _ string) (*gossh.Permissions, error) {
		if a.isTrusted(key) {
			return perms, nil
		}
		return nil, &gossh.PartialSuccessError{Next: gossh.ServerAuthCallbacks{
			PasswordCallback:            a.password(key),
			KeyboardInteractiveCallback: a.interactive(key),
		}}
	}
	return cfg
}
