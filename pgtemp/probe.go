package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/learn-idempotency/learn/pgtemp/dburl"
	"github.com/learn-idempotency/learn/pgtemp/download"
)

// Probing is what `learn doctor` does with each way: look at what this
// machine has for it, then actually start it, use it as learn would (a
// schema of its own, SELECT 1), stop it and check that nothing remains.

// Way is what Probe found out about one way of getting a PostgreSQL.
type Way struct {
	// Mode is the way: URL, Local, Docker or Download.
	Mode Mode
	// Title names the way for people, e.g. "local PostgreSQL binaries".
	Title string
	// Available says whether the way can be tried at all: a URL is set,
	// server binaries were found, a Docker daemon answers.
	Available bool
	// Missing is true when what the way needs is not here at all: no URL is
	// set, no usable server binaries were found, no Docker daemon answers.
	// Setting, installing or starting it is then the fix; when a way is
	// neither Missing nor working, what is here needs fixing instead (a
	// local way is also unavailable, but not Missing, when learn runs as
	// root and has no user to run PostgreSQL as).
	Missing bool
	// Details are lines for people about what learn found (binaries and
	// version, template cache, daemon, image, server address). They never
	// hold a password.
	Details []string
	// Err says why the way is not available, or why it did not work.
	Err error
	// Works is true when the way started, learn made and dropped a schema
	// in it and ran SELECT 1, and it was stopped and removed.
	Works bool
	// ReadyIn is how long the start took (Server.ReadyIn), when it started.
	ReadyIn time.Duration
	// Describe is Server.Describe of the server that started.
	Describe string
	// Cold is true when a local or download start had to run initdb (no
	// usable template was cached: the first run for this version and user).
	Cold bool
	// InitdbTook is how long initdb ran in a cold start.
	InitdbTook time.Duration
	// TemplateErr says why a cold start could not save the cluster
	// template (Server.TemplateError): nil when it saved it. While it is
	// not nil, every start runs initdb.
	TemplateErr error
}

// Titles of the ways, as the doctor and the no-PostgreSQL message name them.
const (
	TitleURL    = "database URL (--database-url / DATABASE_URL)"
	TitleLocal  = "local PostgreSQL binaries"
	TitleDocker = "Docker"
	// TitleDownload is the fourth way, the one that needs nothing installed.
	TitleDownload = "PostgreSQL downloaded once into the user cache directory"
)

var titles = map[Mode]string{URL: TitleURL, Local: TitleLocal, Docker: TitleDocker, Download: TitleDownload}

// Probe looks at one way (URL, Local, Docker or Download) and, when it is available,
// starts it with opts (opts.Mode is ignored) within timeout, makes a schema,
// runs SELECT 1, drops the schema, and closes the server, so that nothing of
// it remains. It never panics; the error of each step is in Way.Err. A ctx
// that ends stops the probe (Way.Err is then ctx's error).
func Probe(ctx context.Context, mode Mode, opts Options, timeout time.Duration) (w Way) {
	w = Way{Mode: mode}
	defer func() {
		if r := recover(); r != nil {
			w.Works = false
			w.Err = fmt.Errorf("learn failed while checking this way (%v); please report it", r)
		}
	}()
	ww := opts.way(mode)
	if ww == nil {
		w.Err = fmt.Errorf("Probe: %q is not one way (url, local, docker or download)", mode)
		return w
	}
	w.Title = titles[mode]
	in := ww.Inspect(ctx, opts.env(time.Now()))
	w.Available, w.Missing, w.Details, w.Err = in.Available, in.Missing, in.Details, in.Err
	if !w.Available {
		return w
	}

	opts.Mode = mode
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := Start(tctx, opts)
	if err != nil {
		w.Err = err
		if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			w.Err = fmt.Errorf("did not start within %s: %w", timeout, err)
		}
		if mode == Download && !download.ArchiveCached(opts.cacheDir) {
			w.Missing = true // the download itself failed: the network or the repository is the fix
		}
		return w
	}
	w.ReadyIn, w.Describe, w.Cold = s.ReadyIn(), s.Describe(), s.RanInitdb()
	w.InitdbTook, w.TemplateErr = s.InitdbTook(), s.TemplateError()
	useErr := use(tctx, s)
	closeErr := s.Close()
	switch {
	case useErr != nil:
		w.Err = useErr
	case closeErr != nil:
		w.Err = fmt.Errorf("started, but did not stop cleanly: %w", closeErr)
	default:
		w.Works = true
	}
	return w
}

// use does what learn does with a server: a fresh schema, a query in it.
func use(ctx context.Context, s *Server) error {
	sc, err := s.NewSchema(ctx)
	if err != nil {
		return err
	}
	cfg, err := dburl.ParseURL(sc.ConnString())
	var conn *pgx.Conn
	if err == nil {
		conn, err = pgx.ConnectConfig(ctx, cfg)
	}
	if err == nil {
		var one int
		err = conn.QueryRow(ctx, "SELECT 1").Scan(&one)
		conn.Close(context.Background())
	}
	if err != nil {
		sc.Drop(context.Background())
		return fmt.Errorf("started, but SELECT 1 in a schema of learn's failed: %w", err)
	}
	return sc.Drop(ctx)
}
