package pgtemp

import (
	"context"
	"errors"
	"os"

	"github.com/learn-idempotency/learn/pgtemp/dburl"
	"github.com/learn-idempotency/learn/pgtemp/docker"
	"github.com/learn-idempotency/learn/pgtemp/download"
	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/reap"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
)

// Reaping: what a learn process killed outright (SIGKILL, the OOM killer,
// a crash) could not remove, the next learn removes, by the owner rules of
// package owner: clusters and template copies (internal/reap,
// internal/template), containers (docker), schemas (dburl). None of them
// ever touches what a live learn uses.

// ReapReport says what Reap found (see reap.Report).
type ReapReport = reap.Report

// ReapedCluster is one orphaned cluster Reap removed.
type ReapedCluster = reap.ReapedCluster

// SkippedDir is a learn-* directory Reap left alone, and why.
type SkippedDir = reap.SkippedDir

// RemovedCopy is an interrupted template copy that was removed.
type RemovedCopy = template.RemovedCopy

// DockerLeftover is a container of learn's that ReapDocker found.
type DockerLeftover = docker.Leftover

// SchemaReport is what ReapSchemas found in a database.
type SchemaReport = dburl.SchemaReport

// LeftSchema is one schema ReapSchemas left alone, and why.
type LeftSchema = dburl.LeftSchema

// Reap removes the clusters of learn processes that were killed before they
// could remove them (see package reap for the rules), in every directory
// learn puts clusters in: $TMPDIR, /tmp and /dev/shm; and the template
// copies that learn processes killed while saving a template left in the
// user cache directory (template.ReapCopies). It never touches a cluster
// whose learn process is alive, nor a copy being made. logf, when not nil,
// gets one line per cluster or copy removed ("removed an orphaned cluster
// of learn pid 1234 in /tmp/learn-…"). The report lists what was removed,
// in use and left alone; the error joins the failures to remove an orphan
// (the rest of the orphans are still removed), or is ctx's error when ctx
// ends. Start runs it before every local cluster; `learn doctor` may run
// it on its own.
func Reap(ctx context.Context, logf func(format string, args ...any)) (ReapReport, error) {
	run, err := runas.Current()
	if err != nil {
		run = runas.Runner{UID: os.Geteuid(), GID: os.Getegid()}
	}
	rep, err := reap.Clusters(ctx, clusterdir.Parents(""), run, logf)
	if ctx.Err() != nil {
		return rep, err
	}
	copies, cerr := template.ReapCopies(template.CacheRoot(""), logf)
	rep.Copies = copies
	return rep, errors.Join(err, cerr)
}

// ReapDocker removes the containers (and their volumes) of learn processes
// that were killed before they could remove them, never one whose learn
// process still runs or that another machine made, and lists every
// container of learn's it saw. logf, when not nil, gets one line per
// container removed. With no Docker daemon it returns an error wrapping
// ErrNoDocker and touches nothing. Each Docker start does the same first.
func ReapDocker(ctx context.Context, logf func(format string, args ...any)) ([]DockerLeftover, error) {
	return docker.Reap(ctx, logf)
}

// ReapSchemas drops the schemas that learn processes killed outright left
// in the database connString names, and reports every schema of learn's it
// saw (see dburl.ReapSchemas for the rules). Start runs it in URL mode
// before anything else; `learn doctor` and the supervising parent of a
// learn that crashed run it too.
func ReapSchemas(ctx context.Context, connString string, logf func(format string, args ...any)) (SchemaReport, error) {
	return dburl.ReapSchemas(ctx, connString, logf)
}

// ReapAll removes what learn processes killed outright left, every way they
// may have left it: local clusters (Reap), Docker containers (ReapDocker)
// when a Docker daemon answers, and schemas in the user's database
// (ReapSchemas) when opts names one learn would use: opts.DatabaseURL is
// set and opts.Mode is Auto or URL (with Local or Docker forced, learn never
// connects to it). It never touches what a live learn uses. A way that is
// absent here (no Docker daemon, no URL) is not an error. logf, when not
// nil, gets one line per thing removed. The error joins the failures of
// each way, or is ctx's error when ctx ends; the parent that supervises
// learn runs it after a crash.
func ReapAll(ctx context.Context, opts Options, logf func(format string, args ...any)) error {
	_, errLocal := Reap(ctx, logf)
	_, errDocker := ReapDocker(ctx, logf)
	if errors.Is(errDocker, ErrNoDocker) {
		errDocker = nil // no daemon: no container of learn's either
	}
	var errURL error
	if opts.DatabaseURL != "" && (opts.Mode == "" || opts.Mode == Auto || opts.Mode == URL) {
		_, errURL = ReapSchemas(ctx, opts.DatabaseURL, logf)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errLocal, errDocker, errURL)
}

// CachedArchive is one downloaded PostgreSQL in the user cache directory.
type CachedArchive = download.CachedArchive

// DownloadCache lists the PostgreSQL archives the download way keeps in the
// user cache directory, and the directory they are in ("" when there is no
// user cache directory).
func DownloadCache() (base string, cached []CachedArchive) { return download.Cache("") }

// CleanCache removes learn's directory in the user cache directory
// (~/.cache/learn): the downloaded PostgreSQL, the cluster templates and the
// versions of binaries seen. The next start downloads or runs initdb again.
// It returns the directory and how many bytes it freed; a cache that does
// not exist is not an error. Clusters that run keep running, but a learn
// that runs downloaded binaries from the cache should be stopped first.
func CleanCache() (dir string, freed int64, err error) { return download.CleanCache("") }
