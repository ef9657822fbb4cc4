//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/internal/pgwait"
)

// snapshot describes a database outside learn's schemas: schemas,
// relations, functions, roles and databases.
func snapshot(t testing.TB, s *Server) string {
	t.Helper()
	conn := connect(t, s.ConnString())
	return queryString(t, conn, `
		SELECT concat_ws(E'\n',
		  (SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace
		    WHERE nspname NOT LIKE 'learn\_%' AND nspname NOT LIKE 'pg\_temp\_%' AND nspname NOT LIKE 'pg\_toast\_temp\_%'),
		  (SELECT string_agg(n.nspname || '.' || c.relname || ':' || c.relkind::text, ',' ORDER BY 1)
		     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		    WHERE n.nspname NOT LIKE 'learn\_%' AND n.nspname NOT LIKE 'pg\_temp\_%' AND n.nspname NOT LIKE 'pg\_toast\_temp\_%'),
		  (SELECT count(*)::text FROM pg_proc),
		  (SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles),
		  (SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database))`)
}

func TestURLModeTouchesOnlyItsSchema(t *testing.T) {
	base := needShared(t)
	before := snapshot(t, base)

	s := startT(t, Options{Mode: URL, DatabaseURL: base.ConnString(), Logf: t.Logf})
	if s.Mode() != URL || s.RanInitdb() {
		t.Errorf("Mode() = %s, RanInitdb() = %v", s.Mode(), s.RanInitdb())
	}
	t.Logf("%s; ready in %s", s.Describe(), s.ReadyIn())
	ctx := context.Background()
	sc, err := s.NewSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, sc.ConnString())
	if _, err := conn.Exec(ctx, "CREATE TABLE bookings (id int PRIMARY KEY, key text UNIQUE); CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'"); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, conn, "SELECT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'bookings'::regclass"); got != sc.Name() {
		t.Errorf("table landed in %s, want %s", got, sc.Name())
	}
	conn.Close(ctx)
	if err := sc.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if schemaExists(t, base, sc.Name()) {
		t.Errorf("schema %s remains", sc.Name())
	}
	if after := snapshot(t, base); after != before {
		t.Errorf("the database changed outside learn's schema:\nbefore %s\nafter  %s", before, after)
	}
}

func TestURLUnreachable(t *testing.T) {
	_, err := Start(context.Background(), Options{Mode: URL, DatabaseURL: "postgres://learn:sekret-pw@127.0.0.1:1/x"})
	if err == nil {
		t.Fatal("Start with an unreachable URL succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"could not reach the PostgreSQL at 127.0.0.1:1", "DATABASE_URL", "--database-url"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "sekret-pw") {
		t.Errorf("message shows the password: %s", msg)
	}
}

func TestURLUnparsableHidesPassword(t *testing.T) {
	_, err := Start(context.Background(), Options{Mode: URL, DatabaseURL: "postgres://learn:sekret-pw@host:notaport/x"})
	if err == nil || strings.Contains(err.Error(), "sekret-pw") || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("Start with a bad URL = %v", err)
	}
}

func TestURLRefused(t *testing.T) {
	s := needShared(t)
	if !s.inst.Disposable {
		t.Skip("the shared server is not local")
	}
	_, err := Start(context.Background(), Options{Mode: URL, DatabaseURL: s.ConnString() + " dbname=no_such_db"})
	if err == nil || !strings.Contains(err.Error(), "refused learn") || !strings.Contains(err.Error(), "no_such_db") {
		t.Fatalf("Start with a missing database = %v", err)
	}
}

func TestAutoNeverReplacesANamedDatabase(t *testing.T) {
	needLocal(t)
	opts := isolated(t, "")
	opts.Mode = Auto
	opts.DatabaseURL = "postgres://learn@127.0.0.1:1/x"
	s, err := Start(context.Background(), opts)
	if err == nil {
		s.Close()
		t.Fatalf("Auto with an unreachable URL started %s", s.Mode())
	}
	for _, want := range []string{"127.0.0.1:1", "--postgres local"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestStartHonoursCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, m := range []Mode{URL, Auto} {
		_, err := Start(ctx, Options{Mode: m, DatabaseURL: "postgres://learn@127.0.0.1:1/x"})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Start(%s) with a cancelled context = %v", m, err)
		}
	}
}

// A URL may carry pgxpool's settings of a pool, as pgx documents them:
// the timing ones are taken (never sent to PostgreSQL as settings of the
// session, which refused the connection), a size is refused by name with
// what to do, a timing that is not a duration is said as such; a
// parameter PostgreSQL does not know is said as a parameter of the URL,
// not as a wrong user, password or database.
func TestURLPoolSettings(t *testing.T) {
	base := needShared(t)
	if !base.inst.Disposable {
		t.Skip("the shared server is not local")
	}
	s := startT(t, Options{Mode: URL, DatabaseURL: base.ConnString() + " pool_max_conn_lifetime=1h pool_max_conn_idle_time=5m pool_health_check_period=30s pool_max_conn_lifetime_jitter=1s"})
	sc, err := s.NewSchema(context.Background())
	if err != nil {
		t.Fatalf("NewSchema with pool settings in the URL: %v", err)
	}
	if err := sc.Drop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ params, want string }{
		{"pool_max_conns=2", "sets pool_max_conns, the size of one pgx pool"},
		{"pool_min_conns=1", "remove pool_max_conns, pool_min_conns and pool_min_idle_conns"},
		{"pool_max_conn_lifetime=soon", `pool_max_conn_lifetime to "soon", which is not a duration`},
		{"no_such_setting=1", "does not take: remove it from the URL"},
	} {
		_, err := Start(context.Background(), Options{Mode: URL, DatabaseURL: base.ConnString() + " " + tt.params})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "check the user, password") {
			t.Errorf("%s: %v, want it to say %q", tt.params, err, tt.want)
		}
	}
}

// With a lock held on a catalog (ACCESS EXCLUSIVE on pg_namespace, in
// another session's open transaction), learn's start on a database URL and
// its new schemas wait for it; each says, while it waits, who holds it up
// and what ends the wait, rather than waiting in silence.
func TestURLStartSaysWhatItWaitsFor(t *testing.T) {
	base := needShared(t)
	defer func(after time.Duration) { pgwait.After = after }(pgwait.After)
	pgwait.After = 100 * time.Millisecond
	ctx := context.Background()
	holder := connect(t, base.ConnString())
	pid := holder.PgConn().PID()
	lock := func() pgx.Tx {
		tx, err := holder.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE pg_catalog.pg_namespace IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Skipf("cannot lock pg_namespace here: %v", err)
		}
		return tx
	}
	var mu sync.Mutex
	var lines []string
	said := make(chan string, 100)
	logf := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
		if strings.Contains(line, "held by another session") {
			said <- line
		}
	}
	want := []string{fmt.Sprintf("pid %d", pid), "holding pg_namespace", fmt.Sprintf("pg_terminate_backend(%d)", pid)}
	next := func() string {
		t.Helper()
		select {
		case line := <-said:
			return line
		case <-time.After(30 * time.Second): // a guard against a hang, not a bound
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("nothing said what the wait is for; the lines: %q", lines)
			return ""
		}
	}
	check := func(what, line string) {
		t.Helper()
		for _, w := range append(want, what) {
			if !strings.Contains(line, w) {
				t.Errorf("said %q: want it to say %q", line, w)
			}
		}
	}

	tx := lock()
	started := make(chan *Server, 1)
	go func() {
		s, err := Start(ctx, Options{Mode: URL, DatabaseURL: base.ConnString(), Logf: logf})
		if err != nil {
			t.Error(err)
		}
		started <- s
	}()
	check("learn's first query", next())
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	s := <-started
	if s == nil {
		return
	}
	defer s.Close()

	tx = lock()
	made := make(chan error, 1)
	go func() {
		sc, err := s.NewSchema(pgwait.WithTrace(ctx, func(msg string) {
			if msg != "" {
				said <- msg
			}
		}))
		if err == nil {
			err = sc.Drop(ctx)
		}
		made <- err
	}()
	check("creating schema learn_", next())
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-made; err != nil {
		t.Fatal(err)
	}
}
