package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

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
	serveDefaultAddr = "127.0.0.1:8080"
	serveMaxInsts    = 8
	serveSeats       = 100
	serveMaxSeats    = 1_000_000
	serveEventName   = "Workshop night"
	serveStartsIn    = 30 * 24 * time.Hour
	// serveDrain is how long requests in flight get to finish at Ctrl-C;
	// then they are cut, and removing the database takes well under the
	// second left of the 5 s learn serve promises (a local cluster or a
	// schema; a Docker container may take longer).
	serveDrain = 4 * time.Second
	serveStop  = 5 * time.Second
	// serveStageClose is how long the API instances get to close their
	// pools and drop their schema before a PostgreSQL that does not answer
	// is stopped under them.
	serveStageClose = 1 * time.Second
)

// serveConfig is what learn serve runs.
type serveConfig struct {
	addr      string          // the front door's
	instances int             // API instances behind it
	seats     int             // of the one event
	drain     time.Duration   // for requests in flight at Ctrl-C
	limits    api.ServeLimits // of every listener
}

// headerInstance is set by every API instance on its answers: the
// API instance that handled the request, e.g. "api-2".
const headerInstance = api.HeaderInstance

// serveCmd is learn serve: the booking API for a workshop to curl.
func serveCmd(g *globals) *cobra.Command {
	cfg := serveConfig{drain: serveDrain, limits: api.WorkshopLimits()}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the booking API for curl: N API instances behind a round-robin front door",
		Long: "Run the booking API on a throwaway PostgreSQL for a workshop to curl: N API instances on loopback ports of their own, behind a round-robin front door at --addr. " +
			"It prints the demo users' tokens and curl commands to paste, and logs every request to standard error (the replays at debug level). " +
			fmt.Sprintf("Every connection has limits (%s for the headers, %s for the whole request, %s for the answer, %s idle, %d at once; %s to get a database connection and %s for the event's row lock, the whole wait however many queue for it, then 503 with Retry-After), so slow or idle clients cannot hold it. ",
				cfg.limits.ReadHeader, cfg.limits.Read, cfg.limits.Write, cfg.limits.Idle, cfg.limits.MaxConns, cfg.limits.DBWait, cfg.limits.LockWait) +
			fmt.Sprintf("Ctrl-C, SIGTERM or SIGHUP stop it within %s: requests in flight get %s to finish, the rest are cut, the database is removed, and it exits 0 (1 if something could not be removed). A PostgreSQL that no longer answers is stopped by force, which can take 5s more. ", serveStop, serveDrain) +
			"Should learn's own PostgreSQL exit (killed, a full disk), it says so at once with the end of PostgreSQL's log, answers 503 database_down meanwhile, and starts it again on the same data; one that cannot start again ends it with exit 1.",
		Example: "learn serve\nlearn serve --instances 2 --addr 127.0.0.1:8080\nlearn serve --seats 3   # sold out after a few bookings\nlearn serve 2>&1 | grep replayed",
		Args:    noArgs("serve"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := g.options(cmd)
			if err != nil {
				return err
			}
			return exit(runServe(cmd.Context(), cfg, opts, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	cmd.Flags().Var(newAddr(&cfg.addr, "addr", serveDefaultAddr, "e.g. "+serveDefaultAddr+", or 127.0.0.1:0 for any free port"), "addr",
		"address of the front door (127.0.0.1:0 for any free port)")
	cmd.Flags().Var(newRange(&cfg.instances, "instances", 1, 1, serveMaxInsts), "instances",
		fmt.Sprintf("how many API instances behind the front door (1 to %d)", serveMaxInsts))
	cmd.Flags().Var(newRange(&cfg.seats, "seats", serveSeats, 1, serveMaxSeats), "seats",
		fmt.Sprintf("seats of the event (1 to %d)", serveMaxSeats))
	return cmd
}

// runServe runs the booking API on a throwaway PostgreSQL (opts) for a
// workshop to curl: cfg.instances API instances on loopback ports of their
// own, behind a round-robin front door (sim.FrontDoor) at cfg.addr, every
// listener with cfg.limits. Examples go to stdout, every log line to
// stderr through one slog logger. Ctrl-C, SIGTERM or SIGHUP (or ctx)
// stop it: requests in flight get cfg.drain to finish, then they are cut
// and their handlers return, "stopped" is the last request-side line, the
// database is removed, and it returns 0. A busy address is 1, before
// anything starts.
func runServe(ctx context.Context, cfg serveConfig, opts pgtemp.Options, stdout, stderr io.Writer) (code int, err error) {
	addr := cfg.addr
	// The front door's port first: a busy address fails before anything starts.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return exitFailure, fmt.Errorf("%s is already in use (another learn serve?): pass --addr 127.0.0.1:0 for any free port, or another port such as --addr %s", addr, otherPort(addr))
		}
		return exitFailure, fmt.Errorf("cannot listen on %s: %w; pass --addr 127.0.0.1:0 for any free port, or another address", addr, err)
	}
	defer ln.Close()

	// One logger for every line on stderr: the API instances and the front
	// door derive theirs from its handler (WithAttrs), so the handler's one
	// mutex keeps the lines whole.
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	say := func(format string, args ...any) { log.Info(fmt.Sprintf(format, args...)) }
	if host, _, _ := net.SplitHostPort(addr); host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		log.Warn(fmt.Sprintf("%s listens on every network interface: anyone who can reach this machine can book with the demo tokens printed below. Use --addr 127.0.0.1:PORT to keep it local.", addr))
	}
	ctx, cancel := signalContext(ctx)
	defer cancel()
	// A statement held up by another session (a lock on a catalog) is
	// said while it waits, with who holds it.
	ctx = pgwait.WithTrace(ctx, func(msg string) {
		if msg != "" {
			log.Warn(msg)
		}
	})

	opts.Logf = say // it announces a download too
	opts.OnDownload = (&downloadReport{say: func(s string) { say("%s", s) }}).update
	srv, err := pgtemp.Start(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			say("stopped before PostgreSQL was ready")
			return exitOK, nil
		}
		return exitFailure, err
	}
	// Whatever could not be removed makes the exit 1 (README: 0 only once
	// everything learn made is gone).
	stopPostgres := func() {
		if cerr := srv.Close(); cerr != nil { // idempotent: the first call's error
			log.Warn("stopping PostgreSQL: " + cerr.Error())
			if code == exitOK {
				code, err = exitFailure, &leftoverError{fmt.Errorf("%w; `learn doctor` with the same --database-url removes what is left once the database answers", cerr)}
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
	st, err := sim.NewStage(ctx, live.Database(srv), sim.StageConfig{
		Instances: cfg.instances,
		Clock:     clock.Real{},
		Log:       log.Handler(),
		Limits:    cfg.limits,
	})
	if err != nil {
		if ctx.Err() != nil {
			return exitOK, nil
		}
		return exitFailure, err
	}
	defer func() {
		// The instances close their pools and drop their schema, which
		// waits for PostgreSQL; one that no longer answers (hung, stopped)
		// is stopped instead after serveStageClose, which ends every
		// connection the instances wait on, so Ctrl-C is never held by it.
		closed := make(chan error, 1)
		go func() { closed <- st.Close() }()
		t := time.NewTimer(serveStageClose)
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
			say("PostgreSQL did not answer within %s while the API instances closed; stopping it", serveStageClose)
			stopPostgres()
			<-closed
		}
	}()
	startsAt := time.Now().Add(serveStartsIn).Truncate(time.Second)
	eventID, err := st.AddEvent(ctx, serveEventName, cfg.seats, startsAt)
	if err != nil {
		if ctx.Err() != nil {
			return exitOK, nil
		}
		return exitFailure, err
	}

	front, err := api.NewFrontDoor(st.Instances, log, cfg.limits)
	if err != nil {
		return exitFailure, err
	}
	hs := front.Serve(ln)

	printServeIntro(stdout, serveIntro{
		db: srv.Describe(), front: "http://" + ln.Addr().String(), instances: st.Instances,
		eventID: eventID, seats: cfg.seats, startsAt: startsAt,
	})

	var goneErr error
	select {
	case <-ctx.Done():
	case <-hs.Done():
	case h := <-gone:
		goneErr = fmt.Errorf("learn's PostgreSQL is gone: %s; learn serve stopped, since nothing can be booked without it. Bookings made before are gone with it (it was a throwaway PostgreSQL); start learn serve again, with room for PostgreSQL if its disk was full (TMPDIR)", h.Summary())
	}
	serveErr := hs.Err()
	say("stopping within %s: requests in flight get %s to finish, then they are cut", serveStop, cfg.drain)
	dctx, dcancel := context.WithTimeout(context.Background(), cfg.drain)
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
		return exitFailure, fmt.Errorf("front door on %s: %w", ln.Addr(), serveErr)
	}
	if goneErr != nil {
		return exitFailure, goneErr
	}
	say("stopped; removing the database")
	return exitOK, nil
}

// otherPort suggests the port after addr's, e.g. 127.0.0.1:8081 for
// 127.0.0.1:8080.
func otherPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	var p int
	if err != nil || host == "" {
		host = "127.0.0.1"
	}
	if _, err := fmt.Sscan(port, &p); err != nil || p <= 0 || p >= 65535 {
		p = 8080
	}
	return net.JoinHostPort(host, fmt.Sprint(p+1))
}

// serveIntro is what learn serve prints once it is ready.
type serveIntro struct {
	db        string
	front     string
	instances []*api.Instance
	eventID   int64
	seats     int
	startsAt  time.Time
}

// printServeIntro prints where everything listens and the commands to paste.
// The line "learn serve: ready" comes last.
func printServeIntro(w io.Writer, in serveIntro) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("learn serve: PostgreSQL: %s", in.db)
	p("learn serve: listening on %s (round-robin over %d API instance%s)", in.front, len(in.instances), plural(len(in.instances)))
	for _, inst := range in.instances {
		p("learn serve: %s on %s", inst.Name, inst.URL)
	}
	p("learn serve: event %d %q, %d seats, starts %s", in.eventID, serveEventName, in.seats, in.startsAt.UTC().Format(time.RFC3339))
	p("")
	p("Demo users (the API takes the user from the token, never from the body):")
	users := api.DemoUsers()
	tokens := make([]string, 0, len(users))
	for tok := range users {
		tokens = append(tokens, tok)
	}
	slices.Sort(tokens)
	for _, tok := range tokens {
		p("  %-5s Authorization: Bearer %s", users[tok], tok)
	}
	ada := "Authorization: Bearer " + api.TokenAda
	book := func(base string, qty int) string {
		return fmt.Sprintf(`curl -si %s/bookings -H "%s" -H "%s: $KEY" -d '{"event_id": %d, "quantity": %d}'`,
			base, ada, api.HeaderIdempotencyKey, in.eventID, qty)
	}
	p("")
	p("Try it from another terminal. One key per booking intent:")
	p("  KEY=$(uuidgen 2>/dev/null || cat /proc/sys/kernel/random/uuid)")
	p("")
	p("Book 2 seats (200, \"replayed\": false):")
	p("  %s", book(in.front, 2))
	p("Run it again: same booking, replayed (200, \"replayed\": true):")
	p("  %s", book(in.front, 2))
	p("The same key with quantity 3 (409 %s):", engine.MsgKeyReused)
	p("  %s", book(in.front, 3))
	if len(in.instances) > 1 {
		p("A retry that lands on another API instance gets the same booking:")
		for _, inst := range in.instances[:2] {
			p("  %s", book(inst.URL, 2))
		}
	} else {
		p("Or straight at the API instance, as a retry that skips the front door:")
		p("  %s", book(in.instances[0].URL, 2))
	}
	p("The events and ada's bookings:")
	p("  curl -s %s/events", in.front)
	p(`  curl -s %s/bookings -H "%s"`, in.front, ada)
	p("")
	p("The %s header of each answer names the API instance that handled it.", headerInstance)
	p("The log goes to stderr; to see only the replays: learn serve 2>&1 | grep replayed")
	p("learn serve: ready; Ctrl-C stops it and removes the database")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
