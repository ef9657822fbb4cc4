//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/download"
	"github.com/learn-idempotency/learn/pgtemp/download/mirrortest"
	"github.com/learn-idempotency/learn/pgtemp/local"
)

// The download way's own tests are package download's; these are the ones
// that go through Start, Auto and Probe, against a mirror on loopback.

// newMirror serves this machine's archive from a mirror on loopback and
// points LEARN_POSTGRES_REPOSITORY at it.
func newMirror(t *testing.T) *mirrortest.Mirror {
	t.Helper()
	path, err := download.ArchivePath()
	if err != nil {
		t.Skip(err)
	}
	m := mirrortest.New(t, mirrortest.StoredJar(t), path)
	t.Setenv(RepositoryEnv, m.URL)
	return m
}

// downloadOpts are options for the download way with a cache of its own
// and the cluster under a fresh parent (see isolated).
func downloadOpts(t testing.TB, cacheDir string) Options {
	t.Helper()
	opts := isolated(t, cacheDir)
	opts.Mode = Download
	return opts
}

// With no URL, no local binaries and no Docker, Auto downloads.
func TestAutoFallsBackToDownload(t *testing.T) {
	noDaemon(t)
	newMirror(t)
	opts := downloadOpts(t, t.TempDir())
	opts.Mode = Auto
	opts.finder = &local.Finder{
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Bindir:   func() string { return "" },
		Glob:     func(string) ([]string, error) { return nil, nil },
		Version:  func(string) (string, error) { return "", errors.New("no postgres") },
	}
	s := startT(t, opts)
	if s.Mode() != Download {
		t.Errorf("Mode = %s, want download", s.Mode())
	}
}

// The doctor's probe of the download way: not tried with CacheOnly while
// nothing is cached, then downloaded, started and removed; then cached.
func TestProbeDownload(t *testing.T) {
	m := newMirror(t)
	opts := downloadOpts(t, t.TempDir())
	opts.CacheOnly = true
	w := Probe(context.Background(), Download, opts, 2*time.Minute)
	if w.Available || w.Works || w.Err == nil || m.Reqs.Load() != 0 {
		t.Fatalf("CacheOnly probe = %+v after %d requests; want not tried", w, m.Reqs.Load())
	}
	opts.CacheOnly = false
	w = Probe(context.Background(), Download, opts, 2*time.Minute)
	if !w.Works || !w.Cold || w.Title != TitleDownload {
		t.Fatalf("probe = %+v; want it downloaded and working", w)
	}
	opts.CacheOnly = true
	w = Probe(context.Background(), Download, opts, 2*time.Minute)
	if !w.Works || w.Cold || !strings.Contains(strings.Join(w.Details, "\n"), "(whole)") {
		t.Fatalf("probe of the cache = %+v", w)
	}
	t.Logf("details: %q", w.Details)
}

// waysNamed is what a failed forced download must name for learn's other
// ways: the server binaries installed here and --postgres local when there
// are some, else every other way.
func waysNamed(opts Options) []string {
	if b, err := local.Find(context.Background(), local.SystemFinder(context.Background(), opts.cacheDir)); err == nil {
		return []string{"server binaries are installed in " + b.Dir, "--postgres local"}
	}
	return []string{"DATABASE_URL", "server binaries", "Docker"}
}

// A forced download that fails says why in one line and names learn's
// other ways.
func TestForcedDownloadFailingNamesTheOtherWays(t *testing.T) {
	t.Setenv(RepositoryEnv, mirrortest.ClosedURL(t))
	opts := downloadOpts(t, t.TempDir())
	_, err := Start(context.Background(), opts)
	if !errors.Is(err, ErrNoPostgres) {
		t.Fatalf("Start = %v; want ErrNoPostgres", err)
	}
	msg := err.Error()
	t.Logf("the user sees: %s", msg)
	for _, want := range append([]string{"cannot reach"}, waysNamed(opts)...) {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q", want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is more than one line")
	}
}
