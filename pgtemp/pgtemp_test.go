//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/learn-idempotency/learn/pgtemp/download/mirrortest"
	"github.com/learn-idempotency/learn/pgtemp/internal/cluster"
	"github.com/learn-idempotency/learn/pgtemp/local"
)

// shared is the package's one server from startShared (nil when there is no
// PostgreSQL; the tests that need it skip).
var shared *Server

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperProcess())
	}
	if u := os.Getenv(schemaHelperEnv); u != "" {
		os.Exit(schemaHelper(u))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	var err error
	shared, err = startShared(ctx)
	cancel()
	if err != nil {
		if !errors.Is(err, ErrNoPostgres) {
			fmt.Fprintln(os.Stderr, "pgtemp tests:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "pgtemp tests: no PostgreSQL, database tests skip:", err)
	}
	code := m.Run()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtemp tests: closing the shared server:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func needShared(t testing.TB) *Server {
	t.Helper()
	if shared == nil {
		t.Skip("no PostgreSQL for tests: install the server binaries or set LEARN_TEST_DATABASE")
	}
	return shared
}

// needLocal skips when there are no local binaries.
func needLocal(t testing.TB) cluster.Binaries {
	t.Helper()
	bin, err := local.Find(context.Background(), local.SystemFinder(context.Background(), t.TempDir()))
	if err != nil {
		t.Skipf("no local PostgreSQL binaries: %v", err)
	}
	return bin
}

// isolated returns options for a local cluster whose directory goes under a
// fresh parent (so a test can check that parent is left empty) and whose
// template cache is cacheDir ("" = the user's real cache).
func isolated(t testing.TB, cacheDir string) Options {
	t.Helper()
	parent, err := os.MkdirTemp("", "pgtemp-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(parent, 0o755) // the cluster user must be able to enter it
	t.Cleanup(func() { os.RemoveAll(parent) })
	return Options{Mode: Local, cacheDir: cacheDir, tmpParent: parent, Logf: t.Logf}
}

func startT(t testing.TB, opts Options) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func connect(t testing.TB, connString string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func queryString(t testing.TB, conn *pgx.Conn, sql string, args ...any) string {
	t.Helper()
	var s *string
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if s == nil {
		return "<null>"
	}
	return *s
}

// processesUsing lists live (not zombie) processes whose working directory
// or command line is in dir: PostgreSQL processes chdir to the data directory.
func processesUsing(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		p := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(p, "stat"))
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if strings.HasPrefix(cwd, dir) || strings.Contains(string(cmdline), dir) {
			found = append(found, fmt.Sprintf("%d (%s, cwd %s)", pid, strings.ReplaceAll(string(cmdline), "\x00", " "), cwd))
		}
	}
	return found
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want Mode
		err  bool
	}{
		{"", Auto, false},
		{"auto", Auto, false},
		{"url", URL, false},
		{"local", Local, false},
		{"docker", Docker, false},
		{"download", Download, false},
		{"Local", "", true},
		{"postgres", "", true},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && !strings.Contains(err.Error(), "auto, url, local, docker") {
			t.Errorf("ParseMode(%q) error %q does not list the valid modes", tt.in, err)
		}
	}
}

func TestURLModeNeedsURL(t *testing.T) {
	_, err := Start(context.Background(), Options{Mode: URL})
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("Start(URL without a URL) = %v; want an error naming DATABASE_URL", err)
	}
}

func TestNoPostgresErrorNamesTheWays(t *testing.T) {
	err := error(&noPostgresError{tried: []attempt{
		{"DATABASE_URL / --database-url", errors.New("not set")},
		{"local PostgreSQL binaries", local.ErrNoBinaries},
		{"Docker", ErrNoDocker},
	}})
	if !errors.Is(err, ErrNoPostgres) || !errors.Is(err, local.ErrNoBinaries) {
		t.Errorf("error does not wrap ErrNoPostgres and the causes")
	}
	for _, want := range []string{"apt install postgresql", "brew install postgresql", "DATABASE_URL", "--database-url", "Docker"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message does not mention %q:\n%s", want, err)
		}
	}
}

// A way asked for with --postgres that fails says first to stop forcing
// it, and never advises installing binaries learn did not look for (the
// trial's `learn --postgres docker play` with binaries installed and no
// Docker said to install them).
func TestForcedWayFailingSaysToStopForcingIt(t *testing.T) {
	docker := (&noPostgresError{tried: []attempt{{"Docker", ErrNoDocker}}, forced: Docker}).Error()
	if !strings.Contains(docker, "leave out --postgres docker (and LEARN_POSTGRES)") || strings.Contains(docker, "apt install postgresql") {
		t.Errorf("forced Docker:\n%s", docker)
	}
	forcedLocal := (&noPostgresError{tried: []attempt{{TitleLocal, local.ErrNoBinaries}}, forced: Local}).Error()
	if !strings.Contains(forcedLocal, "leave out --postgres local") || !strings.Contains(forcedLocal, "apt install postgresql") {
		t.Errorf("forced local without binaries:\n%s", forcedLocal)
	}
	auto := (&noPostgresError{tried: []attempt{{TitleLocal, local.ErrNoBinaries}, {"Docker", ErrNoDocker}}}).Error()
	if strings.Contains(auto, "leave out --postgres") {
		t.Errorf("nothing was forced:\n%s", auto)
	}
}

func TestNothingWorks(t *testing.T) {
	noDaemon(t)                                      // and no Docker either
	t.Setenv(RepositoryEnv, mirrortest.ClosedURL(t)) // and no network
	nothing := &local.Finder{
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Bindir:   func() string { return "" },
		Glob:     func(string) ([]string, error) { return nil, nil },
		Version:  func(string) (string, error) { return "", errors.New("no postgres") },
	}
	for _, opts := range []Options{
		{Mode: Auto, finder: nothing},
		{Mode: Local, finder: nothing},
	} {
		_, err := Start(context.Background(), opts)
		if !errors.Is(err, ErrNoPostgres) {
			t.Fatalf("Start(%s, URL %q) with nothing installed = %v; want ErrNoPostgres", opts.Mode, opts.DatabaseURL, err)
		}
		t.Logf("Start(%s, URL %q):\n%v", opts.Mode, opts.DatabaseURL, err)
		for _, want := range []string{"apt install postgresql", "DATABASE_URL", "Docker", RepositoryEnv} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message lacks %q", want)
			}
		}
	}
}

// startShared starts the one server this package's tests share: the
// database at LEARN_TEST_DATABASE when it is set, else a local cluster
// (pgtemptest.Start, which this package's own tests cannot import).
func startShared(ctx context.Context) (*Server, error) {
	if u := os.Getenv("LEARN_TEST_DATABASE"); u != "" {
		return Start(ctx, Options{Mode: URL, DatabaseURL: u})
	}
	return Start(ctx, Options{Mode: Local})
}

// clusterOf is the cluster behind a server of the local or download way.
func clusterOf(s *Server) *cluster.Cluster { return s.inst.Impl.(*cluster.Cluster) }
