package main

import (
	"context"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/pgfault"
	"github.com/learn-idempotency/learn/internal/serve"
	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
	"github.com/learn-idempotency/learn/sim/api"
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
			code, err := serve.Run(ctx, serve.Config{Addr: addr, Instances: 2, Seats: serve.DefaultSeats, Drain: serve.Drain, Limits: api.WorkshopLimits()}, pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: url}, io.Discard, io.Discard)
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
	return len(learnSchemaNamesOf(t, connString, pid))
}

// learnSchemaNamesOf lists, sorted, the schemas learnSchemasOf counts.
func learnSchemaNamesOf(t *testing.T, connString string, pid int) []string {
	t.Helper()
	return pgtemptest.LearnSchemas(t, connString, pid, testDB.Schemas())
}

// learn serve stopped by Ctrl-C after its database went away cannot drop
// its schema: that is exit 1 with the cause and what to do, not 130 and
// "interrupted" (Ctrl-C is serve's normal end; the leftover is the news).
func TestServeThatCannotRemoveItsSchemaExits1(t *testing.T) {
	proxy := pgfault.Start(t, testDB.ConnString(), pgfault.Rule{Match: "no statement holds this", Action: pgfault.Drop})
	url, err := proxy.ConnString(testDB.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	stdout := &uitest.Buffer{}
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	before := learnSchemaNames(t)
	go func() {
		code, err := serve.Run(ctx, serve.Config{Addr: "127.0.0.1:0", Instances: 1, Seats: serve.DefaultSeats, Drain: serve.Drain, Limits: api.WorkshopLimits()},
			pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: url}, stdout, io.Discard)
		done <- result{code, err}
	}()
	for {
		written := stdout.Changed()
		if strings.Contains(stdout.String(), "learn serve: ready") {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("serve ended before it was ready: %d %v", r.code, r.err)
		case <-written:
		}
	}
	proxy.Close() // the database goes away: connections cut, new ones refused
	cancel(exit.Signalled(syscall.SIGINT))
	r := <-done
	if r.code != exitFailure {
		t.Errorf("serve.Run = %d, %v; want %d", r.code, r.err, exitFailure)
	}
	err = exit.BySignal(ctx, exit.New(r.code, r.err))
	if got := exit.Code(err); got != exitFailure || err == nil || !strings.Contains(err.Error(), "learn doctor") {
		t.Errorf("after Ctrl-C: exit %d, %v; want %d and the cause with what to do (learn doctor)", got, err, exitFailure)
	}
	left := learnSchemaNames(t)
	if len(left) != len(before)+1 {
		t.Errorf("schemas of this process: %v before, %v after; want the one serve could not drop", before, left)
	}
	for _, name := range left { // what learn doctor would drop
		if !slices.Contains(before, name) {
			conn, err := pgx.Connect(t.Context(), testDB.ConnString())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(t.Context(), "DROP SCHEMA "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
				t.Error(err)
			}
			conn.Close(context.Background())
		}
	}
}

// learnSchemaNames lists the learn_* schemas this test process made, less
// testDB's own.
func learnSchemaNames(t *testing.T) []string {
	return learnSchemaNamesOf(t, testDB.ConnString(), os.Getpid())
}
