package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/pgfault"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
)

// learn serve's start-up broken at each step after its port is taken (the
// connection dropped while the tables are made or the event is inserted;
// Ctrl-C while the event is inserted): it says why (or stops quietly on
// Ctrl-C), frees its port and leaves no schema.
func TestServeStartUpFailureCleansUp(t *testing.T) {
	rows := []struct {
		name string
		rule pgfault.Rule
		code int
	}{
		{"connection dropped at CREATE TABLE", pgfault.Rule{Match: "CREATE TABLE", Action: pgfault.Drop}, exitFailure},
		{"connection dropped at the event's INSERT", pgfault.Rule{Match: "INSERT INTO events", Action: pgfault.Drop}, exitFailure},
		{"Ctrl-C at the event's INSERT", pgfault.Rule{Match: "INSERT INTO events", Action: pgfault.Cancel}, exitOK},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			r.rule.Cancel = cancel
			proxy := pgfault.Start(t, testDB.ConnString(), r.rule)
			url, err := proxy.ConnString(testDB.ConnString())
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			before := learnSchemasOfThisProcess(t)
			code, err := runServe(ctx, serveConfig{addr: addr, instances: 2, seats: serveSeats, drain: serveDrain, limits: sim.WorkshopLimits()}, pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: url}, io.Discard, io.Discard)
			if code != r.code {
				t.Errorf("exit %d (%v), want %d", code, err, r.code)
			}
			if r.code == exitFailure && (err == nil || !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "closed") && !strings.Contains(err.Error(), "reset")) {
				t.Errorf("error %v does not name the dropped connection", err)
			}
			if !proxy.Fired() {
				t.Errorf("the step was never reached: the test broke nothing")
			}
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				t.Errorf("%s still listens", addr)
			}
			if after := learnSchemasOfThisProcess(t); after != before {
				t.Errorf("schemas of this process: %d before, %d after", before, after)
			}
		})
	}
}

// learnSchemasOfThisProcess counts the learn_* schemas whose owner record
// names this test process, less testDB's own.
func learnSchemasOfThisProcess(t *testing.T) int {
	return learnSchemasOf(t, testDB.ConnString(), os.Getpid())
}

// learnSchemasOf counts the learn_* schemas in the database of connString
// whose owner record names the process pid, less testDB's own: what runs
// of learn in that process left, and never another test package's (they
// share the server named by LEARN_TEST_DATABASE).
func learnSchemasOf(t *testing.T, connString string, pid int) int {
	t.Helper()
	var n int
	if err := queryOneArgs(t, connString, `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'learn\_%' AND obj_description(oid, 'pg_namespace') LIKE $1 AND NOT nspname = ANY($2)`,
		&n, fmt.Sprintf(`%%"pid":%d,%%`, pid), testDB.Schemas()); err != nil {
		t.Fatal(err)
	}
	return n
}
