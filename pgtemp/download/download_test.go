//go:build linux

package download

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/download/mirrortest"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
	"github.com/ulikunitz/xz"
)

// logs collects Logf lines, safe for Start's goroutine.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(t testing.TB) func(string, ...any) {
	return func(format string, args ...any) {
		t.Helper()
		t.Logf(format, args...)
		l.mu.Lock()
		l.lines = append(l.lines, fmt.Sprintf(format, args...))
		l.mu.Unlock()
	}
}

func (l *logs) find(s string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

// The first start downloads the archive from the mirror, announces it
// (what, how big, from where, kept where), reports its progress, and starts
// a cluster that works; the second starts from the cache without a single
// request. Both leave nothing behind but the cache. The jar is the
// LZMA-compressed one, as Maven Central's are; the other tests get the
// stored one (mirrortest.StoredJar), read by the same code.
func TestDownloadThenStartFromCache(t *testing.T) {
	t.Parallel()
	jar := mirrortest.Jar(t)
	m := newMirror(t, jar)
	cache := t.TempDir()
	opts := mirrorOpts(t, cache, m)
	var l logs
	opts.Logf = l.logf(t)
	var mu sync.Mutex
	var seen []way.DownloadProgress
	opts.OnDownload = func(p way.DownloadProgress) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	}

	s := startD(t, opts)
	dir := filepath.Join(downloadsDir(cache), thisArchiveName(t))
	if !strings.Contains(s.Describe, "downloaded into "+dir) {
		t.Errorf("Describe = %q, want it to name %s", s.Describe, dir)
	}
	if err := use(context.Background(), s); err != nil {
		t.Fatalf("using the downloaded PostgreSQL: %v", err)
	}
	if n := m.Jars.Load(); n != 1 {
		t.Errorf("the jar was requested %d times, want 1", n)
	}
	announce := l.find("downloading PostgreSQL")
	for _, want := range []string{archiveURL(t, m), dir, BytesText(int64(len(jar)))} {
		if !strings.Contains(announce, want) {
			t.Errorf("the announcement %q does not name %q", announce, want)
		}
	}
	mu.Lock()
	first, last := seen[0], seen[len(seen)-1]
	mu.Unlock()
	if first.Done != 0 || first.Total != int64(len(jar)) || first.From != archiveURL(t, m) || first.To != dir {
		t.Errorf("first progress = %+v, want 0 of %d from %s to %s", first, len(jar), archiveURL(t, m), dir)
	}
	if f, ok := last.Fraction(); !ok || f != 1 || last.Done != int64(len(jar)) {
		t.Errorf("last progress = %+v (%v), want all %d bytes", last, f, len(jar))
	}
	clusterDir := clusterOf(s).Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(clusterDir); !os.IsNotExist(err) {
		t.Errorf("the cluster directory %s remains after Close", clusterDir)
	}

	reqs := m.Reqs.Load()
	l = logs{}
	opts.Logf = l.logf(t)
	s2 := startD(t, opts)
	if n := m.Reqs.Load() - reqs; n != 0 {
		t.Errorf("the second start sent %d requests to the mirror, want none", n)
	}
	if s2.RanInitdb {
		t.Errorf("the second start ran initdb; want the template copy")
	}
	if err := use(context.Background(), s2); err != nil {
		t.Fatalf("using the cached PostgreSQL: %v", err)
	}
	if line := l.find("downloading"); line != "" {
		t.Errorf("the second start logged %q", line)
	}
	if left := leftovers(t, cache); len(left) > 0 {
		t.Errorf("the downloads directory holds %v", left)
	}
}

// Run as root, the cluster user cannot enter root's cache (0700 here, as
// /root is): the binaries are copied into the cluster's own directory, and
// go with it. When it can reach the cache, they run from there.
func TestDownloadedBinariesReachTheClusterUser(t *testing.T) {
	t.Parallel()
	m := newMirror(t, mirrortest.StoredJar(t))
	for _, reachable := range []bool{false, true} {
		cache := t.TempDir()
		if reachable {
			os.Chmod(filepath.Dir(cache), 0o755) // the test's own temporary directory
			os.Chmod(cache, 0o755)
			os.MkdirAll(downloadsDir(cache), 0o755)
			os.Chmod(template.CacheRoot(cache), 0o755)
		}
		opts := mirrorOpts(t, cache, m)
		var l logs
		opts.Logf = l.logf(t)
		s := startD(t, opts)
		if err := use(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		copied := strings.HasPrefix(clusterOf(s).BinDir(), clusterOf(s).Dir())
		run, _ := runas.Current()
		if want := run.Cred != nil && !reachable; copied != want {
			t.Errorf("cache reachable %v, learn as uid %d: binaries run from %s (copied %v, want %v)", reachable, os.Geteuid(), clusterOf(s).BinDir(), copied, want)
		}
		s.Close()
	}
}

// An archive that arrives damaged (the connection dropped half way, or
// bytes that do not match the published checksum) is removed and fetched
// again.
func TestDamagedDownloadIsFetchedAgain(t *testing.T) {
	t.Parallel()
	jar := mirrortest.StoredJar(t)
	bad := append([]byte(nil), jar...)
	bad[len(bad)/2] ^= 0xff
	for name, first := range map[string]func(int64, http.ResponseWriter, *http.Request) bool{
		"cut short": mirrortest.CutShort(jar),
		"wrong checksum": func(_ int64, w http.ResponseWriter, _ *http.Request) bool {
			w.Write(bad)
			return true
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newMirror(t, jar)
			m.OnJar(func(n int64, w http.ResponseWriter, r *http.Request) bool {
				return n == 1 && first(n, w, r)
			})
			cache := t.TempDir()
			opts := mirrorOpts(t, cache, m)
			var l logs
			opts.Logf = l.logf(t)
			s := startD(t, opts)
			if err := use(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			if n := m.Jars.Load(); n != 2 {
				t.Errorf("the jar was requested %d times, want 2", n)
			}
			if line := l.find("downloading it again"); !strings.Contains(line, "damaged") {
				t.Errorf("no line says the damaged download was removed and fetched again (got %q)", line)
			}
			if left := leftovers(t, cache); len(left) > 0 {
				t.Errorf("the downloads directory holds %v", left)
			}
		})
	}
}

// A repository that always sends a damaged archive is given up after
// downloadTries, with an error that says so; nothing stays.
func TestAlwaysDamagedDownloadFails(t *testing.T) {
	t.Parallel()
	jar := mirrortest.StoredJar(t)
	m := newMirror(t, jar)
	m.OnJar(func(_ int64, w http.ResponseWriter, r *http.Request) bool { return mirrortest.CutShort(jar)(0, w, r) })
	cache := t.TempDir()
	_, err := start(context.Background(), mirrorOpts(t, cache, m))
	if !errors.Is(err, errDamaged) {
		t.Fatalf("Start = %v; want a damaged download", err)
	}
	if n := m.Jars.Load(); n != downloadTries {
		t.Errorf("the jar was requested %d times, want %d", n, downloadTries)
	}
	if left := leftovers(t, cache); len(left) > 0 {
		t.Errorf("the downloads directory holds %v", left)
	}
	if _, err := os.Stat(filepath.Join(downloadsDir(cache), thisArchiveName(t))); !os.IsNotExist(err) {
		t.Errorf("an archive directory exists after a failed download")
	}
}

// A cached archive whose files changed (a file cut short, one removed) is
// not used: it is removed and downloaded again.
func TestDamagedCacheIsDownloadedAgain(t *testing.T) {
	t.Parallel()
	m := newMirror(t, mirrortest.StoredJar(t))
	cache := t.TempDir()
	opts := mirrorOpts(t, cache, m)
	startD(t, opts).Close()
	dir := filepath.Join(downloadsDir(cache), thisArchiveName(t))
	mf, err := verifyArchiveDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, f := range mf.Files {
		if f.Link == "" && strings.HasSuffix(f.Path, "postgres.bki") {
			victim = filepath.Join(dir, f.Path)
		}
	}
	if err := os.Truncate(victim, 100); err != nil {
		t.Fatal(err)
	}
	var l logs
	opts.Logf = l.logf(t)
	s := startD(t, opts)
	if err := use(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if n := m.Jars.Load(); n != 2 {
		t.Errorf("the jar was requested %d times, want 2", n)
	}
	if line := l.find("is not whole"); !strings.Contains(line, "postgres.bki") {
		t.Errorf("no line names the damaged file (got %q)", line)
	}
}

// Ctrl-C in the middle of the download stops it at once and leaves no
// partial file, no extraction and no cluster.
func TestCancelledDownloadLeavesNothing(t *testing.T) {
	t.Parallel()
	jar := mirrortest.StoredJar(t)
	m := newMirror(t, jar)
	m.OnJar(func(_ int64, w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Length", fmt.Sprint(len(jar)))
		w.Write(jar[:len(jar)/3])
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
		return true
	})
	cache := t.TempDir()
	opts := mirrorOpts(t, cache, m)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.OnDownload = func(p way.DownloadProgress) {
		if p.Done > 0 {
			cancel() // Ctrl-C once bytes are on disk
		}
	}
	_, err := Way{}.Start(ctx, &opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start cancelled mid-download = %v; want context.Canceled", err)
	}
	entries, _ := os.ReadDir(downloadsDir(cache))
	for _, e := range entries {
		if e.Name() != ".lock" {
			t.Errorf("%s remains in the downloads directory", e.Name())
		}
	}
	if left, _ := os.ReadDir(opts.TmpParent); len(left) > 0 {
		t.Errorf("%d entries remain in the cluster parent", len(left))
	}
}

// A repository that accepts the connection and never answers fails the
// download after the configured silence, with a message that says so.
func TestSilentRepositoryTimesOut(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	m := newStubMirror(t, nil, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for the handler
	opts := mirrorOpts(t, t.TempDir(), m)
	opts.DownloadIdle = 200 * time.Millisecond
	_, err := Way{}.Start(context.Background(), &opts)
	if !errors.Is(err, errStalled) {
		t.Fatalf("Start against a silent repository = %v; want a timeout", err)
	}
	for _, want := range []string{m.URL, "sent nothing for 200ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("message is more than one line: %q", err)
	}
}

// Offline, refused, or not there: one line that says which (pgtemp names
// the other ways after it).
func TestUnreachableRepositorySaysSoInOneLine(t *testing.T) {
	t.Parallel()
	closed := mirrortest.ClosedURL(t)
	for _, tt := range []struct {
		name   string
		status int // 0: no server at all
		want   string
	}{
		{"offline", 0, "cannot reach " + closed},
		{"refused", http.StatusForbidden, "refused"},
		{"not there", http.StatusNotFound, "has no PostgreSQL " + Version},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := downloadOpts(t, t.TempDir())
			opts.Repository = closed
			if tt.status != 0 {
				opts.Repository = newStubMirror(t, nil, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(tt.status) }).URL
			}
			_, err := Way{}.Start(context.Background(), &opts)
			if err == nil {
				t.Fatal("Start worked")
			}
			msg := err.Error()
			t.Logf("the user sees: %s", msg)
			for _, want := range []string{tt.want} {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q", want)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message is more than one line")
			}
		})
	}
}

// A LEARN_POSTGRES_REPOSITORY that is no http(s) URL is said as such, not
// as "offline?" (Go's "unsupported protocol scheme" was).
func TestRepositoryThatIsNoURLIsSaidSo(t *testing.T) {
	for _, repo := range []string{"not a url", "ftp://x/y", "/srv/maven"} {
		t.Setenv(RepositoryEnv, repo)
		_, err := start(context.Background(), downloadOpts(t, t.TempDir()))
		if err == nil || !strings.Contains(err.Error(), RepositoryEnv+"=\""+repo+"\" is not an http(s) URL") || strings.Contains(err.Error(), "offline") {
			t.Errorf("%s=%q: %v; want it named as no http(s) URL", RepositoryEnv, repo, err)
		}
	}
}

// CacheOnly never downloads.
func TestCacheOnlyDownloadsNothing(t *testing.T) {
	t.Parallel()
	m := newMirror(t, nil)
	opts := mirrorOpts(t, t.TempDir(), m)
	opts.CacheOnly = true
	_, err := Way{}.Start(context.Background(), &opts)
	if !errors.Is(err, errNotCached) {
		t.Fatalf("Start with CacheOnly and no cache = %v", err)
	}
	if n := m.Reqs.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// A killed learn's partial download and extraction are removed by the
// next download.
func TestLeftoversOfAKilledDownloadGo(t *testing.T) {
	t.Parallel()
	m := newMirror(t, mirrortest.StoredJar(t))
	cache := t.TempDir()
	base := downloadsDir(cache)
	os.MkdirAll(filepath.Join(base, ".extract-123", "bin"), 0o700)
	os.WriteFile(filepath.Join(base, ".part-456"), []byte("half a jar"), 0o600)
	startD(t, mirrorOpts(t, cache, m)).Close()
	if left := leftovers(t, cache); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// The cache as the doctor lists it, and --clean-cache.
func TestDownloadCacheAndClean(t *testing.T) {
	t.Parallel()
	m := newMirror(t, mirrortest.StoredJar(t))
	cache := t.TempDir()
	if _, got := Cache(cache); len(got) != 0 {
		t.Fatalf("empty cache lists %v", got)
	}
	startD(t, mirrorOpts(t, cache, m)).Close()
	_, got := Cache(cache)
	if len(got) != 1 || !got[0].Whole || filepath.Base(got[0].Dir) != thisArchiveName(t) {
		t.Fatalf("cache lists %+v", got)
	}
	// Its size is what its files take: those extracted and the manifest.
	mf, err := verifyArchiveDir(got[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	want := fileSize(t, filepath.Join(got[0].Dir, archiveManifest))
	for _, f := range mf.Files {
		want += f.Size
	}
	if got[0].Size != want || want < int64(len(m.Jar()))/2 {
		t.Fatalf("cache lists %d bytes in %s, want the %d its files take (the jar has %d)", got[0].Size, got[0].Dir, want, len(m.Jar()))
	}
	dir, freed, err := CleanCache(cache)
	if err != nil || dir != template.CacheRoot(cache) || freed < got[0].Size {
		t.Fatalf("cleanCache = %s, %d, %v", dir, freed, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s remains", dir)
	}
	if _, _, err := CleanCache(cache); err != nil {
		t.Errorf("cleaning an empty cache: %v", err)
	}
}

// fileSize is the size of the file name.
func fileSize(t testing.TB, name string) int64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// Entries that would land outside the archive's directory make it damaged.
func TestExtractRefusesEntriesOutsideItsDirectory(t *testing.T) {
	t.Parallel()
	for _, h := range []tar.Header{
		{Typeflag: tar.TypeReg, Name: "../evil"},
		{Typeflag: tar.TypeReg, Name: "/etc/evil"},
		{Typeflag: tar.TypeSymlink, Name: "bin/x", Linkname: "../../../etc/passwd"},
		{Typeflag: tar.TypeSymlink, Name: "bin/y", Linkname: "/etc/passwd"},
		{Typeflag: tar.TypeLink, Name: "bin/z", Linkname: "../outside"},
	} {
		var tb bytes.Buffer
		tw := tar.NewWriter(&tb)
		tw.WriteHeader(&h)
		tw.Close()
		jar := filepath.Join(t.TempDir(), "a.jar")
		writeJar(t, jar, tb.Bytes())
		dir := filepath.Join(t.TempDir(), "x")
		err := extractArchive(context.Background(), jar, dir, manifest{})
		if !errors.Is(err, errDamaged) {
			t.Errorf("%s %q → %q: %v; want it refused as damaged", string(h.Typeflag), h.Name, h.Linkname, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s was made", dir)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".extract-*")); len(left) > 0 {
			t.Errorf("left %v", left)
		}
	}
}

// writeJar writes a jar holding tarData as a .txz.
func writeJar(t testing.TB, name string, tarData []byte) {
	t.Helper()
	var txz bytes.Buffer
	xw, err := xz.NewWriter(&txz)
	if err != nil {
		t.Fatal(err)
	}
	xw.Write(tarData)
	xw.Close()
	var jar bytes.Buffer
	zw := zip.NewWriter(&jar)
	w, _ := zw.Create("postgres-linux-x86_64.txz")
	w.Write(txz.Bytes())
	zw.Close()
	if err := os.WriteFile(name, jar.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Without a published checksum, a jar of the right size whose bytes are
// wrong is found damaged while extracting it, and fetched again. The
// damaged jar is the LZMA-compressed one, its damage early in its .txz,
// so that the decoder meets it (and the tar reader the garbage it makes)
// within the first megabytes; the good one is the stored jar.
func TestCorruptArchiveWithoutChecksumIsFetchedAgain(t *testing.T) {
	t.Parallel()
	jar := mirrortest.StoredJar(t)
	bad := append([]byte(nil), mirrortest.Jar(t)...)
	bad[len(bad)/16] ^= 0xff
	a, _ := thisArchive("")
	var n atomic.Int64
	m := newStubMirror(t, jar, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != a.url() {
			http.NotFound(w, r) // no checksum files at all
			return
		}
		if n.Add(1) == 1 {
			w.Write(bad)
			return
		}
		w.Write(jar)
	})
	var l logs
	opts := mirrorOpts(t, t.TempDir(), m)
	opts.Logf = l.logf(t)
	s := startD(t, opts)
	if err := use(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 || l.find("publishes no checksum") == "" {
		t.Errorf("jar requested %d times (want 2); checksum line %q", n.Load(), l.find("publishes no checksum"))
	}
}
