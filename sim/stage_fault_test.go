package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/internal/pgfault"
)

// faultDB hands out schemas of the test server whose connection strings go
// through a pgfault proxy, with their own application_name (so the test
// can count the connections the stage left open), and, when user is set,
// as that role (a role with a CONNECTION LIMIT makes the server refuse a
// connection with SQLSTATE 53300). It remembers the schemas it made.
type faultDB struct {
	t       *testing.T
	proxy   *pgfault.Proxy
	app     string
	user    string
	params  string // more keyword=value pairs for the schema's connections
	schemas []string
}

func (d *faultDB) NewSchema(ctx context.Context) (Schema, error) {
	sc, err := testDB.NewSchema(ctx)
	if err != nil {
		return nil, err
	}
	d.schemas = append(d.schemas, sc.Name())
	cs, err := d.proxy.ConnString(sc.ConnString())
	if err != nil {
		d.t.Fatal(err)
	}
	cs += " application_name=" + d.app + " " + d.params
	if d.user != "" {
		if _, err := adminExec(d.t, "GRANT ALL ON SCHEMA "+pgx.Identifier{sc.Name()}.Sanitize()+" TO "+d.user); err != nil {
			d.t.Fatal(err)
		}
		cs += " user=" + d.user
	}
	return faultSchema{sc, cs}, nil
}

type faultSchema struct {
	Schema
	cs string
}

func (s faultSchema) ConnString() string { return s.cs }

// adminExec runs sql on the test server outside any schema.
func adminExec(t *testing.T, sql string) (int64, error) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), testDB.ConnString())
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	tag, err := conn.Exec(context.Background(), sql)
	return tag.RowsAffected(), err
}

// leftOver waits until the server has no backend left for application app
// (a closed connection's backend exits shortly after) and reports which of
// the schemas still exist.
func leftOver(t *testing.T, app string, schemas []string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testDB.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for {
		var n int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		// Waiting for the event (the backends' exit), bounded by the test's deadline.
		if _, err := conn.Exec(t.Context(), "SELECT pg_sleep(0.01)"); err != nil {
			t.Fatalf("connections of %s still open: %v", app, err)
		}
	}
	var left []string
	if err := conn.QueryRow(t.Context(), `SELECT coalesce(array_agg(nspname::text), '{}') FROM pg_namespace WHERE nspname = ANY($1)`, schemas).Scan(&left); err != nil {
		t.Fatal(err)
	}
	return left
}

func randomName(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// freePort returns a loopback address nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Every step of building a stage and preparing a run is broken once, the
// way it breaks for real (a refused statement, a cancelled context, too
// many connections, a dropped connection, a busy port): NewStage and
// Prepare return the cause, never panic, and leave no schema, no
// connection and no listener behind.
func TestSetUpFailureAtEveryStepCleansUp(t *testing.T) {
	type row struct {
		name    string
		rule    pgfault.Rule // the proxy's step; zero: none
		cancel  bool         // rule cancels the context
		before  bool         // the context is cancelled before the call
		params  string
		limit   int  // the stage's role may hold this many connections (53300 past it)
		busy    bool // instance 2's port is taken
		prepare bool // Scenario.Prepare, not NewStage
		want    func(error) bool
	}
	isCanceled := func(err error) bool { return errors.Is(err, context.Canceled) }
	dropped := func(err error) bool { return err != nil && !isCanceled(err) }
	rows := []row{
		{name: "cancelled before the schema is made", before: true, want: isCanceled},
		{name: "admin connection dropped at its start", rule: pgfault.Rule{Conn: 1, Action: pgfault.Drop}, want: dropped},
		{name: "cancelled while the admin pool connects", rule: pgfault.Rule{Conn: 1, Action: pgfault.Cancel}, cancel: true, want: isCanceled},
		{name: "CREATE TABLE refused: no such tablespace", params: "default_tablespace=learn_no_such_tablespace",
			want: func(err error) bool { return err != nil && strings.Contains(err.Error(), "learn_no_such_tablespace") }},
		{name: "connection dropped at CREATE TABLE", rule: pgfault.Rule{Match: "CREATE TABLE", Action: pgfault.Drop}, want: dropped},
		{name: "cancelled at CREATE TABLE", rule: pgfault.Rule{Match: "CREATE TABLE", Action: pgfault.Cancel}, cancel: true, want: isCanceled},
		{name: "cancelled while reading the session's settings", rule: pgfault.Rule{Match: "pg_settings", Action: pgfault.Cancel}, cancel: true, want: isCanceled},
		{name: "admin connection dropped as it reconnects with learn's settings", params: "lock_timeout=1", rule: pgfault.Rule{Conn: 2, Action: pgfault.Drop}, want: dropped},
		{name: "instance connection dropped at its start", rule: pgfault.Rule{Conn: 2, Action: pgfault.Drop}, want: dropped},
		{name: "cancelled while an instance pool connects", rule: pgfault.Rule{Conn: 3, Action: pgfault.Cancel}, cancel: true, want: isCanceled},
		{name: "too many connections for the instance pool", limit: 2,
			want: func(err error) bool {
				return errors.Is(err, ErrTooManyClients) && strings.Contains(err.Error(), "53300")
			}},
		{name: "instance 2's port is taken", busy: true, want: func(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }},
		{name: "connection dropped at the event's INSERT", prepare: true, rule: pgfault.Rule{Match: "INSERT INTO events", Action: pgfault.Drop}, want: dropped},
		{name: "cancelled at the event's INSERT", prepare: true, rule: pgfault.Rule{Match: "INSERT INTO events", Action: pgfault.Cancel}, cancel: true, want: isCanceled},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if r.cancel {
				r.rule.Cancel = cancel
			}
			db := &faultDB{t: t, app: randomName("fault_"), params: r.params}
			db.proxy = pgfault.Start(t, testDB.ConnString(), r.rule)
			if r.limit > 0 {
				db.user = randomName("learn_fault_")
				if _, err := adminExec(t, "CREATE ROLE "+db.user+" LOGIN CONNECTION LIMIT "+strconv.Itoa(r.limit)); err != nil {
					t.Skipf("cannot make a role with a connection limit on this server: %v", err)
				}
				t.Cleanup(func() { adminExec(t, "DROP ROLE IF EXISTS "+db.user) })
			}
			addrs := []string{freePort(t), freePort(t)}
			if r.busy {
				ln, err := net.Listen("tcp", addrs[1])
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
			}
			if r.before {
				cancel()
			}

			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panicked: %v", p)
					}
				}()
				if r.prepare {
					s, lerr := Lookup("lost-answer")
					if lerr != nil {
						t.Fatal(lerr)
					}
					var run *Run
					run, err = s.Prepare(ctx, db, Options{})
					if err == nil {
						run.Close()
					}
					return
				}
				cfg := StageConfig{Instances: 2, MaxConns: 2, ConnWait: 1, Addr: func(n int) string { return addrs[n-1] }}
				var st *Stage
				st, err = NewStage(ctx, db, cfg)
				if err == nil {
					st.Close()
				}
			}()
			if !r.want(err) {
				t.Errorf("error %v is not the cause", err)
			}
			if r.rule.Action != 0 && !db.proxy.Fired() {
				t.Errorf("the step was never reached: the test broke nothing")
			}
			if left := leftOver(t, db.app, db.schemas); len(left) > 0 {
				t.Errorf("schemas left behind: %v", left)
			}
			for i, a := range addrs {
				if r.busy && i == 1 {
					continue // the test's own listener
				}
				if c, err := net.Dial("tcp", a); err == nil {
					c.Close()
					t.Errorf("%s still listens", a)
				}
			}
		})
	}
}
