// Package workshop runs learn for a room over SSH (learn workshop): one
// throwaway PostgreSQL, an SSH server made with wish, and for every
// attendee who types the join code their own learn, at their own terminal
// size and colour profile, on their own schemas, with their progress kept
// by the server for the workshop. The presenter's terminal shows the room
// (Present: the dashboard page), from which they send everyone to a
// screen and step the room's play screens together. Close ends it all:
// every session is told, the server stops, every attendee's schema is
// dropped, PostgreSQL is stopped, and the room's summary is left.
//
// The SSH side, in one place:
//
//   - Auth: the join code at the password prompt (keyboard-interactive or
//     password), compared in constant time; a public key on its own once
//     its holder has proved it and given the code (auth.go). A wrong
//     code is answered after 2 s, three to a connection; nothing ever
//     locks an address out, so the right code and a trusted key always
//     get in. An empty answer (no terminal) is no wrong code.
//   - Seats count people (people.go): a person is the key they
//     authenticated with, else their connection; one learn a person at a
//     time (a newer session takes over), and at most four sessions open
//     over one connection.
//   - Before the code: connections are capped per address and in all,
//     and one that does not start the key exchange within a few seconds
//     is closed; one that has said nothing gives way to a newcomer
//     (preauth.go).
//   - Middlewares, outermost first: recover, a rate limit of new
//     sessions per address (ratelimiter), the commands that need no
//     terminal (progress), needsTerminal (one without a terminal is told
//     the ssh -t line to use), then the app (bubbletea's
//     middleware, one program per session, its options from MakeOptions:
//     the session's size, environment and colour profile). The size, at
//     the start and at every window change, is capped at MaxWidth x
//     MaxHeight (size.go).
//   - Nothing else: no shell (the app or the commands of firstPage), no
//     port forwarding (no callbacks allow it; a forward in use is refused
//     with the ssh line to use, and a connection that opens no session is
//     closed: nosession.go), no file transfer (no sftp subsystem; scp's
//     command is refused).
package workshop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	charmlog "charm.land/log/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/ratelimiter"
	"charm.land/wish/v2/recover"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/time/rate"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/pgtemp"
)

// The defaults of learn workshop.
const (
	DefaultAddr         = "127.0.0.1:2222"
	DefaultMaxAttendees = 50
	DefaultIdle         = 30 * time.Minute
)

const (
	// handshakeTimeout bounds a connection's key exchange and
	// authentication, the host key question of a first connection and the
	// join code typed in included (OpenSSH's LoginGraceTime). The start of
	// the key exchange, which needs no person, has kexStart (preauth.go).
	handshakeTimeout = 2 * time.Minute
	// drain is how long Close waits for the attendees' clients to hang up
	// once their apps have ended, before it closes what is left.
	drain = 10 * time.Second
	// SessionsSettle is how long Close lets the sessions end on their own
	// before it stops a PostgreSQL the workshop started. With a server
	// that answers, a session ends within a few tens of milliseconds of
	// being told; one still going after this waits on something, most
	// often its run's clean-up on a server that does not answer. The
	// cluster is the workshop's and goes anyway, its schemas with it:
	// stopping it then ends those waits at once rather than after each
	// clean-up's own timeout (learn serve does the same).
	SessionsSettle = 1 * time.Second
	// sessionsPerSecond is how fast new sessions may come from one
	// address once its burst is spent: twice the room's size, for a room
	// behind one NAT that joins at once, some of it twice.
	sessionsPerSecond = 2
)

// attendeesDB is the database as an attendee's home screen describes it:
// the presenter's paths and user are not theirs to see.
const attendeesDB = "the workshop's, shared by the room; your runs use schemas of your own"

// Config says how to run a workshop.
type Config struct {
	// Addr is where the SSH server listens (host:port; port 0 for any).
	Addr string
	// MaxAttendees is how many attendees may be connected at once.
	MaxAttendees int
	// Code is the join code; "" makes one (NewCode).
	Code string
	// Idle ends an attendee's session after this long without a key.
	Idle time.Duration
	// Postgres says how to get the throwaway PostgreSQL; a MaxConnections
	// of 0 is sized for MaxAttendees (MaxConnectionsFor).
	Postgres pgtemp.Options
	// Connections caps the PostgreSQL connections the attendees' runs hold
	// in all; 0 is what the server lets learn hold. Several workshop
	// servers on one database each take their share so.
	Connections int
	// Server, when set, is a running PostgreSQL to use instead (tests):
	// the workshop leaves it running.
	Server *pgtemp.Server
	// SummaryDir, when set, is where the room's summary is kept from the
	// start, as it changes (at most a second behind), and written a last
	// time at Close; "" keeps none (the caller writes Close's). While
	// the workshop runs, a marker in learn's summary directory
	// (DefaultSummaryDir, else SummaryDir) says where it is, so that the
	// next learn workshop or learn doctor finds it if this process never
	// ends (KeptSummaries).
	SummaryDir string
	// HostKey is the host key's file; "" is DefaultHostKeyPath. It is
	// made the first time and kept, so that attendees' known_hosts stay
	// valid from one workshop to the next.
	HostKey string
	// Logf, when set, gets the server's log: PostgreSQL's start, every
	// connection and session, and what was refused. The room's feed gets
	// what the presenter needs to see either way.
	Logf func(format string, args ...any)

	// sessions replaces the rate of new sessions per address (tests).
	sessions *sessionRate
	// noSession replaces noSessionGrace (tests).
	noSession time.Duration
	// wrongWait replaces the wait before a wrong code is answered
	// (tests; it is told the wait asked for).
	wrongWait func(ctx context.Context, d time.Duration)
	// preauth replaces the limits on connections before the join code
	// (tests).
	preauth *preauthLimits
	// markers replaces where the marker of the kept summary goes (tests).
	markers string
	// sessionHook, when set, sees every message and (nil) every frame of
	// every attendee's app first, with the attendee's name (tests: it may
	// panic).
	sessionHook func(name string, msg tea.Msg)
}

// sessionRate is how many new sessions one address may open at once
// (burst) and how fast after that (every second).
type sessionRate struct {
	perSecond rate.Limit
	burst     int
}

// Workshop is a running workshop. Close ends it.
type Workshop struct {
	cfg         Config
	code        string
	ln          net.Listener
	srv         *ssh.Server
	pg          *pgtemp.Server
	ownPG       bool
	stopHealth  context.CancelFunc // ends the watch of pg's health
	db          *live.Postgres
	budget      *live.Budget
	room        *room.Room
	auth        *auth
	gate        *gate  // connections before the join code
	people      people // whose session holds each person's seat
	docs        *common.Docs
	fingerprint string
	served      chan struct{} // closed when the server stops serving
	accepting   chan struct{} // closed once the server accepts on ln
	serveErr    error

	mu       sync.Mutex
	idleCond *sync.Cond // signalled when active drops to 0
	ending   bool
	drained  chan struct{} // closed once ending and no session is active
	active   int           // sessions in the app's middleware
	programs map[*tea.Program]struct{}

	keeper *keeper // the room's summary on disk, when Config.SummaryDir is set

	closeOnce sync.Once
	summary   room.Summary
	closeErr  error
	keptErr   error // the last write of the kept summary
}

// Start starts a workshop: it takes the address first (a busy port fails
// before anything starts), then gets PostgreSQL (as cfg.Postgres says,
// with max_connections sized for the room) and shares its connections
// among the attendees' runs, loads or makes the host key, and serves SSH
// on the address. On any error, ctx ending included, it returns the cause
// and leaves nothing: the port is free again and PostgreSQL is gone.
func Start(ctx context.Context, cfg Config) (w *Workshop, err error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxAttendees <= 0 {
		cfg.MaxAttendees = DefaultMaxAttendees
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.Code == "" {
		cfg.Code = NewCode()
	}
	if cfg.HostKey == "" {
		if cfg.HostKey, err = DefaultHostKeyPath(); err != nil {
			return nil, err
		}
	}
	// Before the port and PostgreSQL: a key that cannot be kept is said at
	// once, with nothing started.
	if err := prepareHostKey(cfg.HostKey); err != nil {
		return nil, err
	}
	w = &Workshop{cfg: cfg, code: cfg.Code, room: room.New(cfg.MaxAttendees), auth: newAuth(cfg.Code),
		docs: &common.Docs{}, served: make(chan struct{}), accepting: make(chan struct{}), programs: map[*tea.Program]struct{}{}}
	w.idleCond = sync.NewCond(&w.mu)
	// What was made so far goes on any error: the workshop as built, not
	// the named result, which each "return nil, err" sets to nil.
	built := w
	defer func() {
		if err != nil {
			built.release()
		}
	}()

	w.ln, err = net.Listen("tcp", cfg.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%s is already in use (another learn workshop?): pass another port, such as --addr %s, or 127.0.0.1:0 for any free one", cfg.Addr, nextPort(cfg.Addr))
		}
		return nil, fmt.Errorf("cannot listen on %s: %w; pass --addr with another address", cfg.Addr, err)
	}

	if cfg.Server != nil {
		w.pg = cfg.Server
	} else {
		opts := cfg.Postgres
		if opts.MaxConnections == 0 {
			opts.MaxConnections = MaxConnectionsFor(cfg.MaxAttendees)
		}
		if cfg.Logf != nil {
			opts.Logf = cfg.Logf
		}
		w.pg, err = pgtemp.Start(ctx, opts)
		if err != nil {
			return nil, err
		}
		w.ownPG = true
	}
	limit, err := w.pg.ConnectionLimit(ctx)
	if err != nil {
		return nil, err
	}
	w.budget = budgetFor(limit, cfg.Connections)
	if s := w.budget.Stats(); s.Total < runConns {
		return nil, fmt.Errorf("the attendees' runs would share %s (%s lets learn hold %d), too few for even one run (%d): raise max_connections or --connections", common.Count(s.Total, "PostgreSQL connection"), w.pg.Describe(), limit, runConns)
	}
	w.db = live.Existing(w.pg)
	w.db.SetDescription(attendeesDB)
	w.db.SetBudget(w.budget)
	// learn's PostgreSQL is watched (pgtemp.Health): the room's feed and
	// the log say when it goes, with the end of its log, and when it is
	// back; the attendees' runs wait for it meanwhile (live).
	hctx, stopHealth := context.WithCancel(context.Background())
	w.stopHealth = stopHealth
	go live.WatchHealth(hctx, w.pg, func(h pgtemp.Health) {
		line, log := live.News(h)
		w.alert("%s", line)
		for _, l := range log {
			w.logf("PostgreSQL's log: %s", l)
		}
	})

	// wish's Bubble Tea middleware logs through charm's default logger; on
	// standard error it would draw over the presenter's dashboard, and its
	// lines are the library's, not the room's (libraryLog).
	charmlog.SetOutput(writerFunc(func(p []byte) (int, error) {
		w.libraryLog(string(p))
		return len(p), nil
	}))
	sr := sessionRate{perSecond: sessionsPerSecond, burst: max(10, 2*cfg.MaxAttendees)}
	if cfg.sessions != nil {
		sr = *cfg.sessions
	}
	limiter := sessionLimiter{inner: ratelimiter.NewRateLimiter(sr.perSecond, sr.burst, 4096), w: w}
	w.srv, err = wish.NewServer(
		wish.WithHostKeyPath(cfg.HostKey),
		wish.WithVersion("learn-workshop"),
		wish.WithIdleTimeout(cfg.Idle+time.Minute), // the app ends idle sessions first, with a message
		func(s *ssh.Server) error {
			s.ServerConfigCallback = w.auth.serverConfig
			s.HandshakeTimeout = handshakeTimeout
			s.ConnCallback = watchConn
			s.ChannelHandlers = map[string]ssh.ChannelHandler{"session": w.sessionChannel, "default": otherChannel}
			return nil
		},
		// No logging middleware: its lines ("ben connect 127.0.0.1:50724
		// false [] …") are the library's; the app's sessions say who
		// joined and left in words, in the log and the room's feed.
		wish.WithMiddleware(
			recover.MiddlewareWithLogger(printf(w.alert), w.app, needsTerminal, w.commands, ratelimiter.Middleware(limiter)),
		),
	)
	if err != nil {
		return nil, hostKeyError(cfg.HostKey, err)
	}
	w.fingerprint = gossh.FingerprintSHA256(w.srv.HostSigners[0].PublicKey())
	w.auth.logf = w.alert
	w.auth.authed = w.authed
	if cfg.wrongWait != nil {
		w.auth.wait = cfg.wrongWait
	}
	if cfg.SummaryDir != "" {
		markers := cfg.markers
		if markers == "" {
			if markers, err = DefaultSummaryDir(); err != nil {
				markers = cfg.SummaryDir
			}
		}
		if w.keeper, err = startKeeper(cfg.SummaryDir, markers, w.room, w.alert); err != nil {
			return nil, err
		}
	}
	limits := preauthFor(cfg.MaxAttendees)
	if cfg.preauth != nil {
		limits = *cfg.preauth
	}
	w.gate = newGate(limits, w.alert)
	ln := &acceptingListener{Listener: &gateListener{Listener: w.ln, g: w.gate}, accepting: w.accepting}
	go func() {
		defer close(w.served)
		if err := w.srv.Serve(ln); !errors.Is(err, ssh.ErrServerClosed) {
			w.serveErr = err
		}
	}()
	return w, nil
}

// release removes what a Start that failed had made.
func (w *Workshop) release() {
	if w.keeper != nil {
		w.keeper.discard()
	}
	if w.stopHealth != nil {
		w.stopHealth()
	}
	if w.ln != nil {
		_ = w.ln.Close()
	}
	if w.ownPG && w.pg != nil {
		_ = w.pg.Close()
	}
}

// Code is the join code.
func (w *Workshop) Code() string { return w.code }

// Room is the workshop's room.
func (w *Workshop) Room() *room.Room { return w.room }

// Budget is how the attendees' runs share PostgreSQL's connections.
func (w *Workshop) Budget() *live.Budget { return w.budget }

// Addr is where the SSH server listens.
func (w *Workshop) Addr() net.Addr { return w.ln.Addr() }

// HostKey is the host key's file and its fingerprint ("SHA256:…"), for
// attendees to check what their ssh shows the first time.
func (w *Workshop) HostKey() (path, fingerprint string) { return w.cfg.HostKey, w.fingerprint }

// Database says which PostgreSQL the workshop runs on, for people.
func (w *Workshop) Database() string { return w.pg.Describe() }

// SummaryFile is where the room's summary is kept (Config.SummaryDir;
// "" when none is) and, after Close, why its last write failed (nil when
// it did not: the file holds the summary Close returned).
func (w *Workshop) SummaryFile() (path string, err error) {
	if w.keeper == nil {
		return "", nil
	}
	return w.keeper.path, w.keptErr
}

// Done is closed when the server stops serving: after Close, or when
// serving failed (Err says why).
func (w *Workshop) Done() <-chan struct{} { return w.served }

// Err is why serving failed, once Done is closed; nil after Close.
func (w *Workshop) Err() error {
	select {
	case <-w.served:
		return w.serveErr
	default:
		return nil
	}
}

// Close ends the workshop and returns the room's summary: nobody joins
// any more (the listener closes at once), every attendee's app is told
// and ends (their screen says why), and once their sessions have ended
// (at most drain) the connections still open are closed; every attendee's
// runs are removed with their schemas, and PostgreSQL is stopped when the
// workshop started it. Safe to call twice; the second call returns the
// first's result.
func (w *Workshop) Close() (room.Summary, error) {
	w.closeOnce.Do(func() {
		if w.stopHealth != nil {
			w.stopHealth()
		}
		w.room.End()
		w.mu.Lock()
		w.ending = true
		w.drained = make(chan struct{})
		if w.active == 0 {
			close(w.drained)
		}
		for p := range w.programs {
			go p.Send(endMsg{})
		}
		w.mu.Unlock()

		// Shutdown closes only the listeners Serve has taken in: called
		// before, it would leave Serve accepting for ever (a Close right
		// after Start).
		select {
		case <-w.accepting:
		case <-w.served:
		}
		ctx, cancel := context.WithTimeout(context.Background(), drain)
		defer cancel()
		shut := make(chan error, 1)
		go func() { shut <- w.srv.Shutdown(ctx) }() // closes the listener now, then waits for the connections
		settle := time.NewTimer(SessionsSettle)
		defer settle.Stop()
		select {
		case <-w.drained:
		case <-settle.C:
			if w.ownPG {
				w.logf("some sessions are still ending after %s: stopping PostgreSQL under them", SessionsSettle)
				go func() { _ = w.pg.Close() }() // idempotent: the call below waits for it and returns its error
			}
			select {
			case <-w.drained:
			case <-ctx.Done():
				w.logf("some sessions did not end within %s: closing their connections", drain)
			}
		}
		_ = w.srv.Close() // the clients that have not hung up yet
		<-shut
		<-w.served
		w.mu.Lock()
		for w.active > 0 { // sessions whose connection was closed under them
			w.idleCond.Wait()
		}
		w.mu.Unlock()
		w.summary = w.room.Summary(time.Now())
		if w.keeper != nil {
			w.keptErr = w.keeper.finish(w.summary)
		}
		if w.ownPG {
			w.closeErr = w.pg.Close()
		}
	})
	return w.summary, w.closeErr
}

// acceptingListener closes accepting at the first Accept: by then Serve
// has taken the listener in, and Shutdown closes it.
type acceptingListener struct {
	net.Listener
	once      sync.Once
	accepting chan struct{}
}

func (l *acceptingListener) Accept() (net.Conn, error) {
	l.once.Do(func() { close(l.accepting) })
	return l.Listener.Accept()
}
