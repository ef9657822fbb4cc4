// Package way is what pgtemp's four ways of getting a PostgreSQL (the URL,
// local binaries, Docker, the download) have in common, and the one
// interface each implements:
//
//   - [Way]: Start gets a server ready and returns it as an [Instance];
//     Inspect says what this machine has for the way without starting
//     anything (`learn doctor`).
//   - [Env]: what every way is given: the caller's URL, progress callbacks,
//     the server settings, and the directories (cache, temporary) tests
//     replace.
//   - [Instance]: a server a way got ready: how to connect, a line for
//     people, whether learn owns it whole, and its Close.
//   - [Health] and [Watch] (health.go): what learn knows of a server it
//     started, and how a way publishes it.
//
// The top package pgtemp chooses the way (Auto's order), wraps an Instance
// in its Server and keeps the public names; no way imports another way or
// pgtemp itself.
package way

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Way is one way of getting a PostgreSQL.
type Way interface {
	// Start gets a server ready and returns it once it answers queries.
	// If ctx ends, or on any failure, Start leaves nothing behind. On
	// success the caller must call the Instance's Close.
	Start(ctx context.Context, env *Env) (*Instance, error)
	// Inspect says what this machine has for the way (binaries, a daemon,
	// a URL, a cache) without starting anything.
	Inspect(ctx context.Context, env *Env) Inspection
}

// Inspection is what Inspect found out about a way.
type Inspection struct {
	// Available says whether the way can be tried at all.
	Available bool
	// Missing is true when what the way needs is not here at all (no URL,
	// no binaries, no daemon): setting, installing or starting it is the
	// fix.
	Missing bool
	// Details are lines for people about what the way found; never a
	// password.
	Details []string
	// Err says why the way is not available.
	Err error
}

// Env is what every way is given by pgtemp.Start.
type Env struct {
	// DatabaseURL is the caller's --database-url or DATABASE_URL ("" when
	// none).
	DatabaseURL string
	// Logf, when not nil, receives one progress line per step; a way calls
	// it only until its Start returns.
	Logf func(format string, args ...any)
	// OnDownload, when not nil, follows a download of PostgreSQL binaries.
	OnDownload func(DownloadProgress)
	// MaxConnections is the max_connections of a server learn starts; 0
	// means DefaultMaxConnections.
	MaxConnections int
	// CacheOnly makes the download way use cached binaries only.
	CacheOnly bool
	// CacheDir replaces os.UserCacheDir() when not empty (tests).
	CacheDir string
	// TmpParent replaces the automatic choice of the cluster directory's
	// parent when not empty (tests).
	TmpParent string
	// Repository, when not empty, replaces the Maven repository the
	// download way fetches from ($LEARN_POSTGRES_REPOSITORY or Maven
	// Central), so that tests in parallel each have a mirror of their own.
	Repository string
	// DownloadIdle, when > 0, replaces how long a repository may stay
	// silent during a download (tests).
	DownloadIdle time.Duration
	// Started is when pgtemp.Start was called: a way says how long the
	// start took from it.
	Started time.Time
}

// DefaultMaxConnections is the max_connections of a server learn starts:
// room for a race of sim.MaxCopies copies beside other runs.
const DefaultMaxConnections = 250

// Log passes one progress line to Logf, when there is one.
func (e *Env) Log(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	}
}

// Progress passes where a download stands to OnDownload, when there is one.
func (e *Env) Progress(p DownloadProgress) {
	if e.OnDownload != nil {
		e.OnDownload(p)
	}
}

// MaxConnectionsSetting is the server setting for MaxConnections, e.g.
// "max_connections=250".
func (e *Env) MaxConnectionsSetting() string {
	if e.MaxConnections > 0 {
		return "max_connections=" + strconv.Itoa(e.MaxConnections)
	}
	return "max_connections=" + strconv.Itoa(DefaultMaxConnections)
}

// Quiet returns a copy of e whose Logf and OnDownload are nil: for what
// runs after Start returned (a restart by a watcher).
func (e Env) Quiet() Env {
	e.Logf, e.OnDownload = nil, nil
	return e
}

// Instance is a server a way got ready.
type Instance struct {
	// ConnString is the base connection string (keyword/value or URL
	// form); Config is it parsed, with a connect timeout.
	ConnString string
	Config     *pgx.ConnConfig
	// Describe is one line for people; never a password.
	Describe string
	// Disposable is true when the server is learn's own and goes whole at
	// Close (a cluster, a container): its schemas need no DROP.
	Disposable bool
	// RanInitdb, InitdbTook and TemplateErr tell how a cluster was made
	// (see pgtemp.Server's methods of the same names).
	RanInitdb   bool
	InitdbTook  time.Duration
	TemplateErr error
	// Health, when not nil, follows a server learn started.
	Health *Watch
	// Close releases everything the way made; it is idempotent, safe from
	// several goroutines, and needs no caller context.
	Close func() error
	// Impl is the way's own value behind the instance (*cluster.Cluster,
	// *docker.Container, nil for a URL), for the tests that reach into it.
	Impl any
}

// DownloadProgress is where a download of PostgreSQL binaries stands.
type DownloadProgress struct {
	// What names what is downloaded, e.g. "PostgreSQL 17.5.0 for linux/amd64".
	What string
	// From is the archive's URL; To the directory it is kept in.
	From, To string
	// Done is how many bytes have arrived; Total the archive's size in
	// bytes, or -1 when the repository does not say.
	Done, Total int64
}

// Fraction is Done/Total, from 0 to 1; ok is false when Total is unknown.
func (p DownloadProgress) Fraction() (f float64, ok bool) {
	if p.Total <= 0 {
		return 0, false
	}
	return min(1, float64(p.Done)/float64(p.Total)), true
}
