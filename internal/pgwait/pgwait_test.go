package pgwait_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/internal/pgwait"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
)

var testDB *pgtemp.Server

func TestMain(m *testing.M) {
	pgwait.After, pgwait.Every = 50*time.Millisecond, 50*time.Millisecond
	os.Exit(pgtemptest.Main(m, "internal/pgwait", &testDB))
}

// A statement held up by a lock that another session's open transaction
// holds (here ACCESS EXCLUSIVE on a table of its own, as a catalog lock
// would be) is told while it waits: which session (its pid, application
// and state), what it holds, its last statement, and what ends the wait;
// then "" once the statement has gone on. A statement that waits for
// nothing is never told.
func TestWatchSaysWhoHoldsTheLock(t *testing.T) {
	ctx := t.Context()
	sc, err := testDB.NewSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Drop(context.WithoutCancel(ctx))
	cfg, err := pgx.ParseConfig(sc.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	holderCfg := cfg.Copy()
	holderCfg.RuntimeParams["application_name"] = "the holder"
	holder, err := pgx.ConnectConfig(ctx, holderCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.WithoutCancel(ctx))
	if _, err := holder.Exec(ctx, "CREATE TABLE held (n int)"); err != nil {
		t.Fatal(err)
	}
	waiter, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close(context.WithoutCancel(ctx))

	var mu sync.Mutex
	var told []string
	told1 := make(chan struct{})
	tctx := pgwait.WithTrace(ctx, func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, msg)
		if len(told) == 1 {
			close(told1)
		}
	})
	quick := pgwait.Watch(tctx, waiter.Config(), waiter.PgConn().PID(), "a quick statement")
	if _, err := waiter.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	quick()
	if len(told) != 0 {
		t.Fatalf("a statement that waited for nothing was told: %q", told)
	}

	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE held IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	stop := pgwait.Watch(tctx, waiter.Config(), waiter.PgConn().PID(), "reading the table")
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "SELECT count(*) FROM held")
		done <- err
	}()
	<-told1
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	first := told[0]
	for _, want := range []string{"reading the table has waited", fmt.Sprintf("pid %d", holder.PgConn().PID()), "the holder",
		"idle in transaction", "holding held", "LOCK TABLE held IN ACCESS EXCLUSIVE MODE", fmt.Sprintf("pg_terminate_backend(%d)", holder.PgConn().PID())} {
		if !strings.Contains(first, want) {
			t.Errorf("told %q: want it to say %q", first, want)
		}
	}
	if told[len(told)-1] != "" {
		t.Errorf("the end of the wait was not told: %q", told)
	}
}
