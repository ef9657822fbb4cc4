// Package serve is learn serve: the booking API on a throwaway PostgreSQL
// for a workshop to curl. [Run] starts learn's PostgreSQL (or a schema of
// --database-url's), watches it (its end said at once, with its log; 503
// database_down while it starts again; Run ends once it is gone), puts N
// API instances (sim.Stage) behind a round-robin front door
// (sim.FrontDoor), every listener with its limits, adds the one event,
// prints the demo users and curl commands, and on Ctrl-C drains, cuts what
// is left, and removes the database. [Config] is what it runs; the
// constants are its limits and defaults, which cmd/learn's flags and help
// text quote. [SwitchesDesign] and [ScenarioDesign] set its design from
// --set or a scenario's variant, and [CheckInstanceAddrs] checks its
// --instance-addr addresses, in words for a usage error. intro.go is what
// it prints once ready: where everything listens and the commands to
// paste.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/flagval"
	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/pgwait"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
)

// The limits and defaults of learn serve.
const (
	DefaultAddr  = "127.0.0.1:8080"
	MaxInstances = 8
	DefaultSeats = 100
	MaxSeats     = 1_000_000
	EventName    = "Workshop night"
	startsIn     = 30 * 24 * time.Hour
	// Drain is how long requests in flight get to finish at Ctrl-C; then
	// they are cut, and removing the database takes well under the second
	// left of the StopWithin learn serve promises (a local cluster or a
	// schema; a Docker container may take longer).
	Drain      = 4 * time.Second
	StopWithin = 5 * time.Second
	// StageClose is how long the API instances get to close their pools
	// and drop their schema before a PostgreSQL that does not answer is
	// stopped under them.
	StageClose = 1 * time.Second
	// SweepInterval is how often the key sweeper runs when the design's
	// keys expire (--set expiry=24h).
	SweepInterval = time.Minute
)

// Config is what learn serve runs.
type Config struct {
	Addr      string          // the front door's
	Instances int             // API instances behind it
	Seats     int             // of the one event
	Drain     time.Duration   // for requests in flight at Ctrl-C
	Limits    api.ServeLimits // of every listener
	// Design is the server side of a lab design (sim.Switches.ServerDesign):
	// the lesson's when zero. DesignName says which, for the intro ("the
	// lesson's design", "lookup=after-seat-check", "the broken variant of
	// last-seats: …").
	Design     sim.Switches
	DesignName string
	// InstanceAddrs, when set, are the API instances' addresses, one per
	// instance (else each takes a free loopback port).
	InstanceAddrs []string
	// Download, when set, makes the reporter of a download of PostgreSQL
	// that writes its lines with say (pgtemp.Options.OnDownload).
	Download func(say func(line string)) func(pgtemp.DownloadProgress)
}

// Run runs the booking API on a throwaway PostgreSQL (opts) for a
// workshop to curl: cfg.Instances API instances on loopback ports of their
// own, behind a round-robin front door (sim.FrontDoor) at cfg.Addr, every
// listener with cfg.Limits. Examples go to stdout, every log line to
// stderr through one slog logger. Ctrl-C, SIGTERM or SIGHUP (or ctx)
// stop it: requests in flight get cfg.Drain to finish, then they are cut
// and their handlers return, "stopped" is the last request-side line, the
// database is removed, and it returns 0. A busy address is 1, before
// anything starts.
func Run(ctx context.Context, cfg Config, opts pgtemp.Options, stdout, stderr io.Writer) (code int, err error) {
	addr := cfg.Addr
	// The front door's port first: a busy address fails before anything starts.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return exit.Failure, fmt.Errorf("%s is already in use (another learn serve?): pass --addr 127.0.0.1:0 for any free port, or another port such as --addr %s", addr, otherPort(addr, cfg.InstanceAddrs...))
		}
		return exit.Failure, fmt.Errorf("cannot listen on %s: %w; pass --addr 127.0.0.1:0 for any free port, or another address", addr, err)
	}
	defer ln.Close()
	// The instances' own addresses too, before anything starts: a busy
	// one is said now, not once PostgreSQL is up.
	var instLns []net.Listener
	for i, a := range cfg.InstanceAddrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range instLns {
				l.Close()
			}
			if errors.Is(err, syscall.EADDRINUSE) {
				return exit.Failure, fmt.Errorf("--instance-addr %s (API instance api-%d) is already in use: pass another address, or leave --instance-addr out for free ports", a, i+1)
			}
			return exit.Failure, fmt.Errorf("API instance api-%d cannot listen on --instance-addr %s: %w", i+1, a, err)
		}
		instLns = append(instLns, l)
	}
	handed := false // the stage has the instances' listeners, and closes them
	defer func() {
		if !handed {
			for _, l := range instLns {
				l.Close()
			}
		}
	}()

	// One logger for every line on stderr: the API instances and the front
	// door derive theirs from its handler (WithAttrs), so the handler's one
	// mutex keeps the lines whole.
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	say := func(format string, args ...any) { log.Info(fmt.Sprintf(format, args...)) }
	if everyInterface(addr) {
		log.Warn(fmt.Sprintf("%s listens on every network interface: anyone who can reach this machine can book with the demo tokens printed below. Use --addr 127.0.0.1:PORT to keep it local.", addr))
	}
	for i, a := range cfg.InstanceAddrs {
		if everyInterface(a) {
			log.Warn(fmt.Sprintf("API instance api-%d on %s listens on every network interface, past the front door: anyone who can reach this machine can book there with the demo tokens. Use --instance-addr 127.0.0.1:PORT to keep it local.", i+1, a))
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A statement held up by another session (a lock on a catalog) is
	// said while it waits, with who holds it.
	ctx = pgwait.WithTrace(ctx, func(msg string) {
		if msg != "" {
			log.Warn(msg)
		}
	})

	opts.Logf = say // it announces a download too
	if cfg.Download != nil {
		opts.OnDownload = cfg.Download(func(s string) { say("%s", s) })
	}
	srv, err := pgtemp.Start(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			say("stopped before PostgreSQL was ready")
			return exit.OK, nil
		}
		return exit.Failure, err
	}
	// Whatever could not be removed makes the exit 1 (README: 0 only once
	// everything learn made is gone).
	stopPostgres := func() {
		if cerr := srv.Close(); cerr != nil { // idempotent: the first call's error
			log.Warn("stopping PostgreSQL: " + cerr.Error())
			if code == exit.OK {
				code, err = exit.Failure, exit.Cleanup(fmt.Errorf("%w; `learn doctor` with the same --database-url removes what is left once the database answers", cerr))
			}
		}
	}
	defer stopPostgres()
	// learn's own PostgreSQL is watched: its end is said at once, with
	// its log; while learn starts it again the API answers that the
	// database is down (live.Database); once it is gone, serve stops.
	gone := make(chan pgtemp.Health, 1)
	watchCtx, stopWatching := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		told := map[string]bool{} // PostgreSQL's log lines said already
		live.WatchHealth(watchCtx, srv, func(h pgtemp.Health) {
			line, logLines := live.News(h)
			switch h.State {
			case pgtemp.Up:
				say("%s", line)
			case pgtemp.Restarting:
				log.Error(line + ". Meanwhile every request is answered 503 database_down. PostgreSQL's log ends with:")
			default:
				log.Error(line + ". PostgreSQL's log ends with:")
			}
			if h.State != pgtemp.Up {
				for _, l := range logLines {
					if !told[l] {
						told[l] = true
						log.Error("PostgreSQL's log: " + l)
					}
				}
			}
			if h.State == pgtemp.Gone {
				gone <- h
			}
		})
	}()
	defer func() {
		stopWatching()
		<-watched
	}()
	// Every listener, and every wait for the database, has a limit: a
	// workshop's address may be reachable by anyone (--addr 0.0.0.0).
	stageCfg := sim.StageConfig{
		Instances: cfg.Instances,
		Clock:     clock.Real{},
		Log:       log.Handler(),
		Limits:    cfg.Limits,
	}
	if err := cfg.Design.ServerDesign(&stageCfg); err != nil {
		return exit.Usage, err
	}
	if len(cfg.Design.Changed()) > 0 {
		stageCfg.DesignName = cfg.DesignName
	}
	if len(instLns) > 0 {
		stageCfg.Instances, stageCfg.Listeners = len(instLns), instLns
	}
	handed = true
	st, err := sim.NewStage(ctx, live.Database(srv), stageCfg)
	if err != nil {
		if ctx.Err() != nil {
			return exit.OK, nil
		}
		return exit.Failure, err
	}
	defer func() {
		// The instances close their pools and drop their schema, which
		// waits for PostgreSQL; one that no longer answers (hung, stopped)
		// is stopped instead after StageClose, which ends every
		// connection the instances wait on, so Ctrl-C is never held by it.
		closed := make(chan error, 1)
		go func() { closed <- st.Close() }()
		t := time.NewTimer(StageClose)
		defer t.Stop()
		select {
		case cerr := <-closed:
			switch {
			case cerr == nil:
			case srv.Mode() != pgtemp.URL:
				// Not a leftover: the cluster is learn's own, and goes whole
				// right below, the schema with it (a failed removal of the
				// cluster is said, and makes the exit 1).
				log.Info("the API instances could not drop their schema; it goes with learn's own cluster, removed now", "err", cerr)
			default:
				log.Warn("closing the API instances: " + cerr.Error())
			}
		case <-t.C:
			say("PostgreSQL did not answer within %s while the API instances closed; stopping it", StageClose)
			stopPostgres()
			<-closed
		}
	}()
	if st.KeyExpiry() > 0 {
		// The design's keys expire: the sweeper runs every SweepInterval
		// until the stage closes (this defer runs before the one above).
		sctx, stopSweeper := context.WithCancel(ctx)
		swept := make(chan struct{})
		go func() {
			defer close(swept)
			st.SweepEvery(sctx, SweepInterval, func(keys []engine.SweptKey, err error) {
				switch {
				case err != nil:
					log.Warn("the key sweeper failed; it runs again in "+SweepInterval.String(), "err", err)
				case len(keys) > 0:
					log.Info("the key sweeper removed expired keys from their booking rows", "keys", len(keys), "expiry", st.KeyExpiry().String())
				}
			})
		}()
		defer func() {
			stopSweeper()
			<-swept
		}()
	}
	startsAt := time.Now().Add(startsIn).Truncate(time.Second)
	eventID, err := st.AddEvent(ctx, EventName, cfg.Seats, startsAt)
	if err != nil {
		if ctx.Err() != nil {
			return exit.OK, nil
		}
		return exit.Failure, err
	}

	front, err := api.NewFrontDoor(st.Instances, log, cfg.Limits)
	if err != nil {
		return exit.Failure, err
	}
	hs := front.Serve(ln)

	tables := ""
	if opts.DatabaseURL == "" && st.Schema != nil {
		// learn's own throwaway PostgreSQL, with no password to keep: its
		// tables' address, for learn check's [database] or psql.
		tables = st.Schema.ConnString()
	}
	printIntro(stdout, intro{
		tables: tables, db: srv.Describe(), front: "http://" + ln.Addr().String(), instances: st.Instances,
		design: cfg.DesignName, broken: len(cfg.Design.Changed()) > 0, asLessons: cfg.Design.Effective() == sim.Switches{}, notApplying: cfg.Design.NotApplying(),
		eventID: eventID, seats: cfg.Seats, startsAt: startsAt, keyExpiry: st.KeyExpiry(),
	})

	var goneErr error
	select {
	case <-ctx.Done():
	case <-hs.Done():
	case h := <-gone:
		goneErr = fmt.Errorf("learn's PostgreSQL is gone: %s; learn serve stopped, since nothing can be booked without it. Bookings made before are gone with it (it was a throwaway PostgreSQL); start learn serve again, with room for PostgreSQL if its disk was full (TMPDIR)", h.Summary())
	}
	serveErr := hs.Err()
	say("stopping within %s: requests in flight get %s to finish, then they are cut", StopWithin, cfg.Drain)
	dctx, dcancel := context.WithTimeout(context.Background(), cfg.Drain)
	defer dcancel()
	// The front door first, so the requests it is still passing on reach
	// instances that are still up; then the instances themselves, by the
	// same deadline. Each Shutdown returns once its handlers have.
	if err := hs.Shutdown(dctx); err != nil {
		say("front door: %v", err)
	}
	var wg sync.WaitGroup
	for _, in := range st.Instances {
		wg.Go(func() {
			if err := in.Shutdown(dctx); err != nil {
				say("%s: %v", in.Name, err)
			}
		})
	}
	wg.Wait()
	if serveErr != nil {
		return exit.Failure, fmt.Errorf("front door on %s: %w", ln.Addr(), serveErr)
	}
	if goneErr != nil {
		return exit.Failure, goneErr
	}
	say("stopped; removing the database")
	return exit.OK, nil
}

// SwitchesDesign sets cfg's design from --set's name=value settings: a
// switch of the browser client (whatever its value) and a design that is
// no server's are errors that say what to do instead.
func SwitchesDesign(cfg *Config, sets []string) error {
	for _, set := range sets {
		if name, _, _ := strings.Cut(set, "="); sim.ClientSwitch(strings.TrimSpace(name)) {
			return fmt.Errorf("%s is the browser client's switch, not the server's: learn serve runs the server side of a design (lookup, lock, constraint, compare, store, expiry, isolation, on-40001, in-flight); the client is yours to write against it, or try the switch in learn lab", strings.TrimSpace(name))
		}
	}
	d, err := sim.ParseSwitches(sets)
	if err != nil {
		return err
	}
	cfg.Design, cfg.DesignName = d, d.String()
	return d.ServerDesign(&sim.StageConfig{})
}

// ScenarioDesign sets cfg's design to the one variant v of s runs, with
// the API instances its world needs unless they were given (a retry on
// another instance needs two); a design of the client is an error.
func ScenarioDesign(cfg *Config, s *sim.Scenario, v sim.Variant, instancesGiven bool) error {
	cfg.Design = s.Design(v)
	cfg.DesignName = fmt.Sprintf("the %s variant of %s (%s)", v, s.Name, cfg.Design)
	if !instancesGiven && len(cfg.InstanceAddrs) == 0 {
		cfg.Instances = max(cfg.Instances, s.Instances())
	}
	return cfg.Design.ServerDesign(&sim.StageConfig{})
}

// CheckInstanceAddrs checks cfg's --instance-addr addresses: each its own
// (":0", any free port, may repeat) and not the front door's, one per API
// instance when instancesGiven (--instances was on the command line), at
// most MaxInstances, and each host:port with a port from 0 to 65535. The
// error is a usage error's message, which says what to give instead.
func CheckInstanceAddrs(cfg Config, instancesGiven bool) error {
	n := len(cfg.InstanceAddrs)
	if n == 0 {
		return nil
	}
	seen := map[string]string{cfg.Addr: "--addr"}
	for _, a := range cfg.InstanceAddrs {
		if prev, twice := seen[a]; twice && !strings.HasSuffix(a, ":0") {
			return fmt.Errorf("--instance-addr %s is given twice (it is %s's already): give each API instance an address of its own", a, prev)
		}
		seen[a] = "another --instance-addr"
	}
	if instancesGiven && cfg.Instances != n {
		return fmt.Errorf("--instances %d and %d --instance-addr: give one address per API instance, or leave --instances out", cfg.Instances, n)
	}
	if n > MaxInstances {
		return fmt.Errorf("%d --instance-addr: at most %d API instances", n, MaxInstances)
	}
	for _, a := range cfg.InstanceAddrs {
		if err := flagval.NewAddr(new(string), "instance-addr", "", "e.g. 127.0.0.1:8081").Set(a); err != nil {
			return err
		}
	}
	return nil
}

// BrokenScenarios lists the scenarios whose broken variant changes the
// server (the designs learn serve can serve), not only the client.
func BrokenScenarios() string {
	var names []string
	for _, s := range sim.Scenarios() {
		if s.HasBroken() && s.Design(sim.Broken).ServerDesign(&sim.StageConfig{}) == nil {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ", ")
}
