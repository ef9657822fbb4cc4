//go:build linux

package pgtemp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/internal/pgfault"
	"github.com/learn-idempotency/learn/pgtemp/internal/pgsql"
	"github.com/learn-idempotency/learn/pgtemp/local"
)

// mySchemas lists the learn_* schemas whose owner record names this
// process, less the shared server's: what a server under test made.
func mySchemas(t *testing.T) []string {
	t.Helper()
	conn := connect(t, needShared(t).ConnString())
	var names []string
	err := conn.QueryRow(context.Background(), `SELECT coalesce(array_agg(nspname::text), '{}') FROM pg_namespace
		WHERE nspname LIKE 'learn\_%' AND obj_description(oid, 'pg_namespace') LIKE $1 AND NOT nspname = ANY($2)`,
		fmt.Sprintf(`%%"pid":%d,%%`, os.Getpid()), needShared(t).Schemas()).Scan(&names)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// limitedRole makes a role that may hold limit connections and create
// schemas (create true), dropped when the test ends; it skips the test on a
// server where the test's user may not make roles.
func limitedRole(t *testing.T, limit int, create bool) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := "learn_fault_" + hex.EncodeToString(b[:])
	conn := connect(t, needShared(t).ConnString())
	ctx := context.Background()
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN CONNECTION LIMIT %d", name, limit)); err != nil {
		t.Skipf("cannot make a role on this server: %v", err)
	}
	t.Cleanup(func() {
		conn.Exec(ctx, "DROP OWNED BY "+name)
		conn.Exec(ctx, "DROP ROLE "+name)
	})
	var db string
	conn.QueryRow(ctx, "SELECT current_database()").Scan(&db)
	if _, err := conn.Exec(ctx, "REVOKE CREATE ON DATABASE "+pgx.Identifier{db}.Sanitize()+" FROM PUBLIC"); err != nil {
		t.Fatal(err)
	}
	if create {
		conn.Exec(ctx, "GRANT CREATE ON DATABASE "+pgx.Identifier{db}.Sanitize()+" TO "+name)
	}
	return name
}

// Every step of a start in URL mode and of NewSchema is broken once, for
// real: the call returns the cause, never panics, and leaves no schema
// behind.
func TestURLStartAndNewSchemaFailAtEveryStep(t *testing.T) {
	base := needShared(t)
	defer func(w time.Duration) { pgsql.ConnWait = w }(pgsql.ConnWait)
	type row struct {
		name   string
		rule   pgfault.Rule
		cancel bool
		user   func(t *testing.T) string // the role to connect as ("" the test's)
		hold   bool                      // the test holds one connection as that role
		schema bool                      // break NewSchema, not Start
		want   string                    // in the error; "canceled" for context.Canceled
	}
	rows := []row{
		{name: "start: connection dropped at its start", rule: pgfault.Rule{Conn: 1, Action: pgfault.Drop}, want: "could not reach the PostgreSQL"},
		{name: "start: cancelled at the first query", rule: pgfault.Rule{Match: "server_version", Action: pgfault.Cancel}, cancel: true, want: "canceled"},
		{name: "start: connection dropped at the first query", rule: pgfault.Rule{Match: "server_version", Action: pgfault.Drop}, want: "did not answer a query"},
		{name: "start: cancelled while looking for orphans", rule: pgfault.Rule{Match: "pg_namespace n", Action: pgfault.Cancel}, cancel: true, want: "canceled"},
		{name: "start: too many connections", user: func(t *testing.T) string { return limitedRole(t, 0, true) }, want: "has no free connection for learn"},
		{name: "schema: cancelled at CREATE SCHEMA", schema: true, rule: pgfault.Rule{Match: "CREATE SCHEMA", Action: pgfault.Cancel}, cancel: true, want: "canceled"},
		{name: "schema: connection dropped at CREATE SCHEMA", schema: true, rule: pgfault.Rule{Match: "CREATE SCHEMA", Action: pgfault.Drop}, want: "could not create schema"},
		{name: "schema: CREATE SCHEMA refused", schema: true, user: func(t *testing.T) string { return limitedRole(t, 5, false) }, want: "needs the CREATE privilege"},
		{name: "schema: too many connections", schema: true, hold: true, user: func(t *testing.T) string { return limitedRole(t, 1, true) }, want: "has no free connection for learn"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			pgsql.ConnWait = 100 * time.Millisecond // the server is not going to free a connection
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if r.cancel {
				r.rule.Cancel = cancel
			}
			proxy := pgfault.Start(t, base.ConnString(), r.rule)
			url, err := proxy.ConnString(base.ConnString())
			if err != nil {
				t.Fatal(err)
			}
			if r.user != nil {
				url += " user=" + r.user(t)
			}
			var srv *Server
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panicked: %v", p)
					}
				}()
				if !r.schema {
					srv, err = Start(ctx, Options{Mode: URL, DatabaseURL: url})
					return
				}
				srv, err = Start(context.Background(), Options{Mode: URL, DatabaseURL: url})
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				if r.hold {
					// The role's one connection, once Start's has gone
					// (its backend exits just after Start returns).
					cfg, err := pgx.ParseConfig(url)
					if err != nil {
						t.Fatal(err)
					}
					conn, err := pgsql.ConnectWaiting(t.Context(), cfg, time.Hour)
					if err != nil {
						t.Fatal(err)
					}
					defer conn.Close(context.Background())
				}
				_, err = srv.NewSchema(ctx)
			}()
			switch {
			case err == nil:
				t.Errorf("no error")
			case r.want == "canceled":
				if !errors.Is(err, context.Canceled) {
					t.Errorf("error %v, want context.Canceled", err)
				}
			case !strings.Contains(err.Error(), r.want):
				t.Errorf("error %v lacks %q", err, r.want)
			}
			if r.rule.Action != 0 && !proxy.Fired() {
				t.Errorf("the step was never reached: the test broke nothing")
			}
			if srv != nil {
				if got := srv.Schemas(); len(got) > 0 {
					t.Errorf("the server holds schemas %v", got)
				}
				if err := srv.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			}
			if left := mySchemas(t); len(left) > 0 {
				t.Errorf("schemas left behind: %v", left)
			}
		})
	}
}

// fakeBinaries makes a directory of server programs for findBinaries:
// initdb and postgres are the given shell script bodies, or the real
// program of the system's binaries when "" (postgres must not be a script:
// a copy of /bin/false stands for one that exits at once).
func fakeBinaries(t *testing.T, initdb string, postgresFails bool) *local.Finder {
	t.Helper()
	real := needLocal(t)
	dir, err := os.MkdirTemp("", "pgtemp-fakebin-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	if initdb == "" {
		initdb = `exec ` + filepath.Join(real.Dir, "initdb") + ` "$@"`
	}
	if err := os.WriteFile(filepath.Join(dir, "initdb"), []byte("#!/bin/sh\n"+initdb+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	pg := filepath.Join(real.Dir, "postgres")
	if postgresFails {
		pg = "/bin/false"
	}
	raw, err := os.ReadFile(pg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "postgres"), raw, 0o755); err != nil {
		t.Fatal(err)
	}
	return &local.Finder{
		LookPath: func(string) (string, error) { return filepath.Join(dir, "postgres"), nil },
		Bindir:   func() string { return "" },
		Glob:     func(string) ([]string, error) { return nil, nil },
		Version:  func(string) (string, error) { return real.Version, nil },
	}
}

// Every step of a local start fails once, for real: Start returns the
// cause, and leaves no directory and no process behind.
func TestLocalStartFailsAtEveryStep(t *testing.T) {
	t.Parallel()
	needLocal(t)
	rows := []struct {
		name string
		set  func(t *testing.T, o *Options)
		want string
	}{
		{"no binaries", func(t *testing.T, o *Options) {
			o.finder = &local.Finder{LookPath: func(string) (string, error) { return "", os.ErrNotExist }, Bindir: func() string { return "" },
				Glob: func(string) ([]string, error) { return nil, nil }, Version: func(string) (string, error) { return "", os.ErrNotExist }}
		}, "no PostgreSQL"},
		{"the cluster directory cannot be made", func(t *testing.T, o *Options) {
			o.tmpParent = filepath.Join(o.tmpParent, "a-file")
			if err := os.WriteFile(o.tmpParent, nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "could not create a directory for the PostgreSQL cluster"},
		{"initdb fails", func(t *testing.T, o *Options) {
			o.finder = fakeBinaries(t, `echo "initdb: could not write the data directory: refused" >&2; exit 1`, false)
		}, "initdb failed"},
		{"postgres exits while starting", func(t *testing.T, o *Options) {
			o.finder = fakeBinaries(t, "", true)
		}, "PostgreSQL exited while starting"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			opts := isolated(t, t.TempDir())
			parent := opts.tmpParent
			r.set(t, &opts)
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panicked: %v", p)
					}
				}()
				var s *Server
				s, err = Start(context.Background(), opts)
				if err == nil {
					s.Close()
				}
			}()
			if err == nil || !strings.Contains(err.Error(), r.want) {
				t.Errorf("error %v lacks %q", err, r.want)
			}
			os.Remove(filepath.Join(parent, "a-file"))
			if entries, _ := os.ReadDir(parent); len(entries) > 0 {
				t.Errorf("left behind in %s: %v", parent, entries)
			}
			if p := processesUsing(parent); len(p) > 0 {
				t.Errorf("processes left behind: %v", p)
			}
		})
	}
}
