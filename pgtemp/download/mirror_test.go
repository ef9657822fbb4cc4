//go:build linux

package download

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/learn-idempotency/learn/pgtemp/download/mirrortest"
	"github.com/learn-idempotency/learn/pgtemp/internal/cluster"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// downloadOpts is what the download way is given in a test: a cache of its
// own (cacheDir) and the cluster under a fresh parent.
func downloadOpts(t testing.TB, cacheDir string) way.Env {
	t.Helper()
	parent, err := os.MkdirTemp("", "pgtemp-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(parent, 0o755) // the cluster user must be able to enter it
	t.Cleanup(func() { os.RemoveAll(parent) })
	return way.Env{CacheDir: cacheDir, TmpParent: parent, Logf: t.Logf, Started: time.Now()}
}

// start starts the download way with env.
func start(ctx context.Context, env way.Env) (*way.Instance, error) {
	return Way{}.Start(ctx, &env)
}

// newMirror serves jar as this machine's archive; the test points the
// download way at it with mirrorOpts (not the environment, so that tests
// run in parallel).
func newMirror(t testing.TB, jar []byte) *mirrortest.Mirror {
	t.Helper()
	return newStubMirror(t, jar, nil)
}

// newStubMirror is newMirror whose every request h answers, when h is not nil.
func newStubMirror(t testing.TB, jar []byte, h http.HandlerFunc) *mirrortest.Mirror {
	t.Helper()
	a, err := thisArchive("")
	if err != nil {
		t.Skip(err)
	}
	return mirrortest.NewStub(t, jar, a.path(), h)
}

// mirrorOpts is downloadOpts fetching from m.
func mirrorOpts(t testing.TB, cacheDir string, m *mirrortest.Mirror) way.Env {
	t.Helper()
	env := downloadOpts(t, cacheDir)
	env.Repository = m.URL
	return env
}

// thisArchiveName is the directory of this machine's archive in the cache.
func thisArchiveName(t testing.TB) string {
	a, err := thisArchive("")
	if err != nil {
		t.Skip(err)
	}
	return a.name()
}

// clusterOf is the cluster behind a server of the download way.
func clusterOf(s *way.Instance) *cluster.Cluster { return s.Impl.(*cluster.Cluster) }

// leftovers lists what is in the downloads directory of cacheDir besides
// the lock and whole archives: partial downloads and extractions.
func leftovers(t testing.TB, cacheDir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(downloadsDir(cacheDir))
	var out []string
	for _, e := range entries {
		if e.Name() != ".lock" && strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// startD starts with opts within a minute, failing the test on error.
func startD(t testing.TB, opts way.Env) *way.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Way{}.Start(ctx, &opts)
	if err != nil {
		t.Fatalf("Start(download): %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// archiveURL is where m serves this machine's archive.
func archiveURL(t testing.TB, m *mirrortest.Mirror) string {
	a, err := thisArchive(m.URL)
	if err != nil {
		t.Skip(err)
	}
	return a.url()
}

// use does what learn does with a server: a table, a row, a query.
func use(ctx context.Context, s *way.Instance) error {
	conn, err := pgx.Connect(ctx, s.ConnString)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var n int
	_, err = conn.Exec(ctx, "CREATE TABLE t (n int); INSERT INTO t VALUES (1)")
	if err == nil {
		err = conn.QueryRow(ctx, "SELECT sum(n) FROM t").Scan(&n)
	}
	if err == nil && n != 1 {
		err = fmt.Errorf("sum(n) = %d, want 1", n)
	}
	return err
}
