// Package pgtemp gets learn a PostgreSQL to run the booking engine against and
// removes every trace of it afterwards.
//
// The ways, in the order Auto tries them (design.md, "Throwaway PostgreSQL"):
//
//  1. URL: an existing database named by --database-url or DATABASE_URL. learn
//     works only inside schemas learn_<random> that it creates and drops.
//  2. Local: PostgreSQL server binaries on this machine. learn runs a private
//     cluster in a 0700 temporary directory, Unix socket only, as an
//     unprivileged user when learn itself runs as root, and deletes it on Close.
//  3. Docker: PostgreSQL in a container through Docker's client, the postgres
//     module (image postgres:17-alpine, or LEARN_POSTGRES_IMAGE), removed with
//     its volume on Close; containers of learn processes that were killed are
//     removed by the next Docker start (see docker.go).
//  4. Download: PostgreSQL server binaries for this OS and architecture,
//     downloaded once from a Maven repository (Maven Central, or the mirror
//     LEARN_POSTGRES_REPOSITORY names) into the user cache directory,
//     checked before every use, and started like local binaries (see
//     download.go). It needs nothing installed.
//
// When none works, Start returns an error wrapping ErrNoPostgres whose message
// names the ways to fix it; reading still works without a database.
//
// learn watches a server it started (watch.go): Health says at once when
// its process exits without Close, how and with the end of its log; a
// local cluster is started again on the same data (every answered COMMIT
// kept), a Docker container is not. Health's State is then Restarting, Up
// again, or Gone.
package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Mode names a way of getting a PostgreSQL.
type Mode string

// The ways Start knows. Auto uses URL when a DatabaseURL is given; without
// one it tries Local, then Docker, then Download.
const (
	Auto     Mode = "auto"
	URL      Mode = "url"
	Local    Mode = "local"
	Docker   Mode = "docker"
	Download Mode = "download"
)

var modes = []Mode{Auto, URL, Local, Docker, Download}

// ParseMode turns a --database-mode style value into a Mode. The empty string
// means Auto. Any other value outside auto, url, local, docker and download is an error
// that lists the valid ones.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Auto, nil
	}
	for _, m := range modes {
		if Mode(s) == m {
			return m, nil
		}
	}
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown database mode %q: use one of %s", s, strings.Join(names, ", "))
}

// Options says how Start gets a PostgreSQL.
type Options struct {
	// Mode is the way to use; the zero value means Auto.
	Mode Mode
	// DatabaseURL is the caller's --database-url or DATABASE_URL, in URL
	// (postgres://…) or keyword/value form. It may be empty, except in URL mode.
	DatabaseURL string
	// Logf, when not nil, receives one progress line per step ("initdb…",
	// "starting PostgreSQL…"). Start calls it from its own goroutine and
	// never after it returns.
	Logf func(format string, args ...any)
	// OnDownload, when not nil, follows a download of PostgreSQL binaries
	// (the download way, when they are not cached yet): it is called once
	// before the first byte arrives (Done 0), as bytes arrive, and with
	// Done == Total at the end. Start calls it from its own goroutine and
	// never after it returns; Logf announces the download just before.
	OnDownload func(DownloadProgress)
	// MaxConnections is the max_connections of a server learn starts (the
	// local, download and Docker ways); 0 means DefaultMaxConnections. A
	// workshop raises it for its attendees' runs. A database named by URL
	// keeps its own setting.
	MaxConnections int
	// CacheOnly makes the download way use binaries that are cached and
	// never download them (`learn doctor` checks it so while an earlier
	// way works).
	CacheOnly bool

	// cacheDir replaces os.UserCacheDir() (tests use it to force a cold start).
	cacheDir string
	// tmpParent replaces os.TempDir() as the parent of the cluster directory.
	tmpParent string
	// finder replaces the search of this machine for server binaries.
	finder *finder
	// downloadIdle replaces downloadIdle, how long the repository may stay
	// silent during a download.
	downloadIdle time.Duration
}

// DefaultMaxConnections is the max_connections of a server learn starts:
// room for a race of sim.MaxCopies copies beside other runs.
const DefaultMaxConnections = 250

// maxConnections is the max_connections setting of a server learn starts.
func (o *Options) maxConnections() string {
	if o.MaxConnections > 0 {
		return "max_connections=" + strconv.Itoa(o.MaxConnections)
	}
	return "max_connections=" + strconv.Itoa(DefaultMaxConnections)
}

func (o *Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

func (o *Options) progress(p DownloadProgress) {
	if o.OnDownload != nil {
		o.OnDownload(p)
	}
}

// ErrNoPostgres is wrapped by Start's error when learn found no PostgreSQL it
// could use. Callers test for it with errors.Is and fall back to the parts of
// learn that need no database.
var ErrNoPostgres = errors.New("no PostgreSQL available")

// Server is a PostgreSQL that Start got ready. Its methods are safe for use by
// several goroutines. Close releases everything learn made with it.
type Server struct {
	mode       Mode
	describe   string
	connString string
	cfg        *pgx.ConnConfig // parsed connString, with a connect timeout
	readyIn    time.Duration
	ranInitdb  bool
	initdbTook time.Duration
	tmplErr    error
	local      *cluster         // nil unless mode is Local or Download
	docker     *dockerContainer // nil unless mode == Docker

	mu      sync.Mutex // guards closed, schemas and pending; never held over a round trip
	closed  bool
	schemas map[string]*Schema
	pending map[string]bool // names whose CREATE was sent and may have been carried out

	closeOnce sync.Once
	closeErr  error
}

// Mode reports which way Start used: URL, Local, Docker or Download.
func (s *Server) Mode() Mode { return s.mode }

// Describe returns one line for people, for example
// "local PostgreSQL 15.18 (/usr/lib/postgresql/15/bin), cluster in /tmp/learn-ab12 running as postgres".
// It never contains a password.
func (s *Server) Describe() string { return s.describe }

// ConnString returns the base connection string (keyword/value or URL form)
// that pgx.ParseConfig accepts. It sets no search_path: use NewSchema for a
// connection string that lands in a schema of its own. In URL mode it is the
// caller's DatabaseURL and may hold a password, so do not print it (in
// Docker mode it holds the container's random password).
func (s *Server) ConnString() string { return s.connString }

// ReadyIn reports how long Start took, from its call until the server
// answered a query.
func (s *Server) ReadyIn() time.Duration { return s.readyIn }

// RanInitdb reports whether Start had to run initdb because no usable cluster
// template was cached (the first run for this PostgreSQL major version and
// user, or after a broken template). It is false in URL mode.
func (s *Server) RanInitdb() bool { return s.ranInitdb }

// InitdbTook is how long initdb ran when Start had to run it (0 otherwise):
// what every start costs while no template can be saved.
func (s *Server) InitdbTook() time.Duration { return s.initdbTook }

// TemplateError says why Start ran initdb but could not save the cluster
// template for later starts (nil when it saved one, or copied one): the
// user cache directory is a file, read-only or full, or there is none. Its
// message names the directory and the cause; every start then runs initdb.
func (s *Server) TemplateError() error { return s.tmplErr }

// Close releases everything learn made. In URL mode it drops the schemas
// NewSchema made that were not dropped yet, and touches nothing else. In
// local and download modes it stops the cluster (fast shutdown; immediate shutdown if the
// server lingers more than 2 s; then, after 2 s more, SIGKILL to its process
// group and to each backend, so at most about 4 s for a server that hangs) and
// removes its temporary directory, so its schemas go with it and no process
// or file of learn's remains. In Docker mode it removes the container with
// its volume (the data) and checks that nothing labelled with this start
// remains. Close needs no caller context, so it works
// after the context given to Start was cancelled. It is idempotent and safe
// to call from several goroutines: every call waits for the first to finish
// and returns its error. After Close, NewSchema fails and Drop does nothing.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		var names []string
		for name := range s.schemas {
			names = append(names, name)
		}
		for name := range s.pending {
			names = append(names, name)
		}
		s.schemas, s.pending = nil, nil
		s.mu.Unlock()

		var errs []error
		if s.local == nil && s.docker == nil && len(names) > 0 {
			// Dropping the schemas one by one only matters in a database
			// that outlives learn; a local cluster goes as a whole below.
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			errs = append(errs, s.dropSchemas(ctx, names))
			cancel()
		}
		if s.local != nil {
			errs = append(errs, s.local.close())
		}
		if s.docker != nil {
			errs = append(errs, s.docker.close())
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// Start gets a PostgreSQL the way opts.Mode says and returns it once it
// answers queries.
//
// Auto uses the URL when opts.DatabaseURL is set, and fails if that database
// cannot be used (a named database is never silently replaced); without a URL
// it tries local binaries, then (when there are none, or they fail to start)
// Docker. When none works the error wraps ErrNoPostgres and names the ways to
// fix it. URL requires opts.DatabaseURL; an unreachable database is reported
// within about 5 s. Local fails with an error wrapping ErrNoPostgres when no
// binaries are found. Docker fails with an error wrapping ErrNoPostgres and
// ErrNoDocker when no daemon can be used (each is given about 3 s to
// answer), and with an error saying what to do when the image cannot be
// pulled or the container does not become ready; a panic inside the Docker
// client becomes an error too. Download fails with an error wrapping
// ErrNoPostgres that says in one line why (no network, the repository
// refused, a repository that stayed silent for 30 s) and names the other
// three ways.
//
// Before it starts anything, Start removes what learn processes killed
// outright left for the way it uses: in URL mode their schemas in that
// database (ReapSchemas), in local mode their clusters (Reap), in Docker
// mode their containers (ReapDocker); the download way reaps like the
// local way, and removes partial downloads of killed learn processes.
//
// If ctx ends during Start, Start returns ctx's error and leaves no process
// and no directory behind. On success the caller must call Close.
func Start(ctx context.Context, opts Options) (*Server, error) {
	t0 := time.Now()
	if opts.Mode == "" {
		opts.Mode = Auto
	}
	switch opts.Mode {
	case URL:
		if opts.DatabaseURL == "" {
			return nil, errors.New("database mode url needs a database: set DATABASE_URL or pass --database-url")
		}
		return startURL(ctx, &opts, t0)
	case Local:
		s, err := startLocal(ctx, &opts, t0)
		if errors.Is(err, errNoBinaries) {
			return nil, &noPostgresError{tried: []attempt{{"local PostgreSQL binaries", err}}, forced: Local}
		}
		return s, err
	case Docker:
		s, err := startDocker(ctx, &opts, t0)
		if errors.Is(err, ErrNoDocker) {
			return nil, &noPostgresError{tried: []attempt{{"Docker", err}}, forced: Docker}
		}
		return s, err
	case Download:
		s, err := startDownload(ctx, &opts, t0)
		if err != nil && ctx.Err() == nil {
			de := &downloadError{err: err}
			// Binaries installed here are the way to name first.
			if b, ferr := findBinaries(ctx, systemFinder(ctx, opts.cacheDir)); ferr == nil {
				de.local = b.dir
			}
			err = de
		}
		return s, err
	case Auto:
		return startAuto(ctx, &opts, t0)
	default:
		_, err := ParseMode(string(opts.Mode))
		return nil, err
	}
}

func startAuto(ctx context.Context, opts *Options, t0 time.Time) (*Server, error) {
	if opts.DatabaseURL != "" {
		// A database the user named is used or reported, never silently
		// replaced by another: a typo would otherwise go unnoticed.
		s, err := startURL(ctx, opts, t0)
		if err != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w\n(to use local PostgreSQL binaries instead, unset DATABASE_URL or pass --postgres local)", err)
		}
		return s, err
	}
	tried := []attempt{{"DATABASE_URL / --database-url", errors.New("not set")}}

	s, err := startLocal(ctx, opts, t0)
	if err == nil {
		return s, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !errors.Is(err, errNoBinaries) {
		opts.logf("local PostgreSQL did not start: %v; trying Docker", err)
	}
	tried = append(tried, attempt{"local PostgreSQL binaries", err})

	s, err = startDocker(ctx, opts, t0)
	if err == nil {
		return s, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	tried = append(tried, attempt{"Docker", err})

	opts.logf("no local PostgreSQL binaries and no Docker: using PostgreSQL's binaries downloaded into the user cache directory (downloaded the first time)")
	s, err = startDownload(ctx, opts, t0)
	if err == nil {
		return s, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	tried = append(tried, attempt{"download from " + DownloadRepository(), err})
	return nil, &noPostgresError{tried: tried}
}

// otherWays names the ways other than the download, for its errors.
const otherWays = "set DATABASE_URL (or --database-url), install PostgreSQL's server binaries, or start Docker"

// downloadError is the download way's error when it was the way asked for:
// one line that says why and names the other ways, first the local
// binaries when they are installed (local: their directory).
type downloadError struct {
	err   error
	local string
}

func (e *downloadError) Error() string {
	if e.local != "" {
		return fmt.Sprintf("could not get PostgreSQL by downloading it: %v; PostgreSQL's server binaries are installed in %s: use them with --postgres local (or without forcing the download way)", e.err, e.local)
	}
	return fmt.Sprintf("could not get PostgreSQL by downloading it: %v; learn's other ways: %s", e.err, otherWays)
}

func (e *downloadError) Unwrap() []error { return []error{ErrNoPostgres, e.err} }

type attempt struct {
	way string
	err error
}

// noPostgresError is what Start returns when no way worked.
type noPostgresError struct {
	tried []attempt
	// forced is the one way asked for (--postgres or LEARN_POSTGRES), or
	// "" when learn tried every way: a forced way's fixes start with not
	// forcing it, and name only what learn knows is missing.
	forced Mode
}

// Error names every way tried and why it failed, then the fixes. A way that
// failed for want of room (diskFullError) is said first, in its own words,
// and installing the server binaries is suggested only when they are missing.
func (e *noPostgresError) Error() string {
	var b strings.Builder
	full, _ := errors.AsType[*diskFullError](errors.Join(e.errs()...))
	if full != nil {
		b.WriteString(full.Error() + "\nSo learn found no PostgreSQL to run the booking engine against:\n")
	} else {
		b.WriteString("learn found no PostgreSQL to run the booking engine against:\n")
	}
	binaries := false
	for _, a := range e.tried {
		if d, ok := errors.AsType[*diskFullError](a.err); ok {
			fmt.Fprintf(&b, "  - %s: no space left on device in %s (see above)\n", a.way, d.dir)
		} else {
			fmt.Fprintf(&b, "  - %s: %v\n", a.way, a.err)
		}
		binaries = binaries || a.way == TitleLocal && !errors.Is(a.err, errNoBinaries)
	}
	b.WriteString("Any one of these fixes it:\n")
	if e.forced != "" {
		fmt.Fprintf(&b, "  - leave out --postgres %s (and LEARN_POSTGRES): learn then tries every way; `learn doctor` shows which one works here\n", e.forced)
	}
	if full != nil {
		b.WriteString("  - free some space in " + full.dir + ", or set TMPDIR to a directory with room\n")
	}
	if !binaries && (e.forced == "" || e.forced == Local) {
		b.WriteString("  - install the PostgreSQL server binaries, e.g. `apt install postgresql` or `brew install postgresql`\n")
	}
	b.WriteString("  - set DATABASE_URL or pass --database-url with a database where learn may create schemas\n")
	b.WriteString("  - start Docker (learn then runs PostgreSQL in a container, image " + DockerImage() + ")\n")
	b.WriteString("  - go online once, or set " + RepositoryEnv + " to a Maven mirror: learn downloads PostgreSQL into the user cache directory\n")
	b.WriteString("Reading the lesson and the interview card works without a database.")
	return b.String()
}

func (e *noPostgresError) Unwrap() []error { return append([]error{ErrNoPostgres}, e.errs()...) }

func (e *noPostgresError) errs() []error {
	var errs []error
	for _, a := range e.tried {
		errs = append(errs, a.err)
	}
	return errs
}
