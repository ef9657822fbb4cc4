// Package pgtemptest is what the tests of learn's packages need of pgtemp,
// kept out of the production package:
//
//   - [Main] is the TestMain of a package that needs PostgreSQL: its one
//     server ([Start]: LEARN_TEST_DATABASE when set, as pgx's tests use
//     PGX_TEST_DATABASE, else a local cluster), each test then taking a
//     fresh schema with NewSchema; and state directories of the run's own.
//   - [OwnCluster] is a local cluster of one test's own, for a test that
//     kills or stops its PostgreSQL.
//   - [LearnSchemas] lists the learn_* schemas a database holds, for the
//     tests that check nothing was left.
package pgtemptest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/pgtemp"
)

// EnvDatabase names the database URL the tests use instead of a local
// cluster of their own.
const EnvDatabase = "LEARN_TEST_DATABASE"

// Start starts the PostgreSQL of a test package: the database at
// LEARN_TEST_DATABASE when it is set, else a local cluster. When neither
// is possible the error wraps pgtemp.ErrNoPostgres. The caller must Close
// the server.
func Start(ctx context.Context) (*pgtemp.Server, error) {
	if u := os.Getenv(EnvDatabase); u != "" {
		return pgtemp.Start(ctx, pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: u})
	}
	return pgtemp.Start(ctx, pgtemp.Options{Mode: pgtemp.Local})
}

// Main is the TestMain of a test package that needs PostgreSQL: it starts
// the package's one server (Start), stores it in *srv, runs the tests and
// closes the server. The person's own state and data directories are
// never the tests': XDG_STATE_HOME and XDG_DATA_HOME are directories of
// the run's own (learn's progress, a workshop's summaries and their
// notices, host keys), removed at the end; the cache (cluster templates, a
// downloaded PostgreSQL) is shared, as it is the same for every run. It
// returns the exit code for os.Exit; a server that cannot start is a
// failure, named after pkg.
func Main(m interface{ Run() int }, pkg string, srv **pgtemp.Server) int {
	own, err := os.MkdirTemp("", "learn-test-state-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s tests: %v\n", pkg, err)
		return 1
	}
	defer os.RemoveAll(own)
	for env, dir := range map[string]string{"XDG_STATE_HOME": "state", "XDG_DATA_HOME": "data"} {
		os.Setenv(env, filepath.Join(own, dir))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s, err := Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s tests need PostgreSQL: %v\n", pkg, err)
		return 1
	}
	*srv = s
	code := m.Run()
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close test PostgreSQL:", err)
	}
	return code
}

// OwnCluster starts a local cluster of the test's own (opts with the local
// way), for a test that kills or stops its PostgreSQL; it is closed when
// the test ends. The test is skipped where the tests run on
// LEARN_TEST_DATABASE (learn has no process of it to kill) or where no
// local PostgreSQL is installed.
func OwnCluster(t testing.TB, opts pgtemp.Options) *pgtemp.Server {
	t.Helper()
	if os.Getenv(EnvDatabase) != "" {
		t.Skipf("the tests run on %s here: learn has no process of it to kill", EnvDatabase)
	}
	opts.Mode = pgtemp.Local
	srv, err := pgtemp.Start(t.Context(), opts)
	if errors.Is(err, pgtemp.ErrNoPostgres) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// LearnSchemas lists, sorted, the learn_* schemas in the database of
// connString, less those in except (a test server's own, srv.Schemas());
// with pid > 0 only those whose owner record names process pid: what runs
// of learn in that process left, never another test package's (they share
// the server of LEARN_TEST_DATABASE).
func LearnSchemas(t testing.TB, connString string, pid int, except []string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), connString)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	owner := "%"
	if pid > 0 {
		owner = fmt.Sprintf(`%%"pid":%d,%%`, pid)
	}
	rows, err := conn.Query(t.Context(), `SELECT nspname::text FROM pg_namespace
		WHERE nspname LIKE 'learn\_%' AND coalesce(obj_description(oid, 'pg_namespace'), '') LIKE $1 ORDER BY 1`, owner)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return slices.Contains(except, n) })
}
