package pgwait_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/internal/pgwait"
)

// A lock held on a catalog (ACCESS EXCLUSIVE on pg_namespace, in another
// session's open transaction) holds up even a new session's first query,
// which resolves its names through it; Watch still says who holds it,
// since its own look resolves no schema's name.
func TestWatchSaysWhoHoldsACatalogLock(t *testing.T) {
	ctx := t.Context()
	cfg, err := pgx.ParseConfig(testDB.ConnString())
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
	waiter, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close(context.WithoutCancel(ctx))
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "LOCK TABLE pg_catalog.pg_namespace IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Skipf("cannot lock pg_namespace here: %v", err)
	}

	var mu sync.Mutex
	var told []string
	first := make(chan struct{})
	tctx := pgwait.WithTrace(ctx, func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, msg)
		if len(told) == 1 {
			close(first)
		}
	})
	stop := pgwait.Watch(tctx, waiter.Config(), waiter.PgConn().PID(), "the first query")
	done := make(chan error, 1)
	go func() {
		var v string
		done <- waiter.QueryRow(ctx, "SELECT current_setting('server_version')").Scan(&v)
	}()
	<-first
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{fmt.Sprintf("pid %d", holder.PgConn().PID()), "the holder", "holding pg_namespace"} {
		if !strings.Contains(told[0], want) {
			t.Errorf("told %q: want it to say %q", told[0], want)
		}
	}
}
