// Package pgwait says what a PostgreSQL session waits for, while it waits:
// a statement of learn's that another session holds up (a lock on a
// catalog taken by someone's open transaction, say) is told as it waits,
// with who holds it and what ends the wait, instead of a silence of many
// seconds.
//
// The caller puts a teller in the context (WithTrace, as net/http/httptrace
// puts its hooks there) and wraps a statement in Watch; once the statement
// has waited longer than After, Watch asks PostgreSQL, on a connection of
// its own, what the session waits for (pg_blocking_pids, pg_stat_activity,
// pg_locks) and tells it, again whenever it changes, and "" once the wait is
// over. Without a teller in the context, Watch does nothing.
package pgwait

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// After is how long a statement waits before Watch tells what it waits
// for; Every is how often it looks again, telling what it sees when that
// changed (who holds the statement up), and at least every Remind.
var (
	After  = 2 * time.Second
	Every  = 2 * time.Second
	Remind = 10 * time.Second
)

type traceKey struct{}

// WithTrace returns ctx with tell, which Watch calls with what a statement
// under ctx waits for ("" once it waits no more). tell may be called from
// another goroutine, never after the Watch's stop has returned.
func WithTrace(ctx context.Context, tell func(msg string)) context.Context {
	return context.WithValue(ctx, traceKey{}, tell)
}

// Traced reports whether ctx has a teller (WithTrace).
func Traced(ctx context.Context) bool { return traceOf(ctx) != nil }

func traceOf(ctx context.Context) func(string) {
	tell, _ := ctx.Value(traceKey{}).(func(string))
	return tell
}

// Watch follows the session pid (a connection made with cfg) while it runs
// a statement that what names ("creating schema learn_…"), and returns the
// function that ends the watch, which the caller calls once the statement
// has returned. Without a teller in ctx it does nothing.
func Watch(ctx context.Context, cfg *pgx.ConnConfig, pid uint32, what string) (stop func()) {
	tell := traceOf(ctx)
	if tell == nil || cfg == nil {
		return func() {}
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTimer(After)
		defer t.Stop()
		select {
		case <-wctx.Done():
			return
		case <-t.C:
		}
		side := cfg.Copy()
		// The look must not wait itself. An empty search_path (pg_catalog
		// is searched all the same, by its oid), names left unqualified
		// and none of SQL's own syntax for a type or a function (::int is
		// pg_catalog.int4, EXTRACT pg_catalog.extract, each found by the
		// schema's name) keep it off
		// pg_namespace, whose lock holds up every session that resolves a
		// schema's name; a lock on another catalog it reads is cut short.
		side.RuntimeParams["search_path"] = ""
		side.RuntimeParams["statement_timeout"] = "1000"
		side.RuntimeParams["lock_timeout"] = "500"
		side.RuntimeParams["application_name"] = "learn (what a statement waits for)"
		delete(side.RuntimeParams, "options")
		var conn *pgx.Conn
		defer func() {
			if conn != nil {
				conn.Close(context.Background())
			}
		}()
		told, lastKey := false, ""
		var toldAt time.Time
		for wctx.Err() == nil {
			if conn == nil || conn.IsClosed() {
				conn, _ = pgx.ConnectConfig(wctx, side)
			}
			msg, key := describe(wctx, conn, pid, what)
			if msg != "" && wctx.Err() == nil && (!told || key != lastKey || time.Since(toldAt) >= Remind) {
				tell(msg)
				told, lastKey, toldAt = true, key, time.Now()
			}
			t.Reset(Every)
			select {
			case <-wctx.Done():
			case <-t.C:
			}
		}
		if told {
			tell("")
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// blocker is a session that holds up another, as pg_stat_activity shows it.
type blocker struct {
	pid       int
	app, user string
	state     string
	since     time.Duration // in state
	query     string
	relations string // the relations it holds locks on that conflict with most
}

// describe asks PostgreSQL what session pid waits for, over conn (which
// may be nil when it could not connect), in a sentence for people; key is
// what it waits for without the times (who holds it up, and how). Both are
// "" when it waits for nothing: it runs.
func describe(ctx context.Context, conn *pgx.Conn, pid uint32, what string) (msg, key string) {
	fallback := fmt.Sprintf("%s is waiting for PostgreSQL (learn could not ask it what for)", what)
	if conn == nil {
		return fallback, "?"
	}
	var waitType, waitEvent string
	var waited time.Duration
	err := conn.QueryRow(ctx, `SELECT coalesce(wait_event_type, ''), coalesce(wait_event, ''),
		coalesce(now() - query_start, '0s')
		FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&waitType, &waitEvent, &waited)
	waitedSecs := waited.Seconds()
	if err != nil {
		return fallback, "?"
	}
	rows, err := conn.Query(ctx, `
		SELECT a.pid, coalesce(a.application_name, ''), coalesce(a.usename::text, ''), coalesce(a.state, ''),
		       coalesce(now() - a.state_change, '0s'), left(coalesce(a.query, ''), 120),
		       coalesce((SELECT string_agg(DISTINCT c.relname::text, ', ')
		                   FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		                  WHERE l.pid = a.pid AND l.granted
		                    AND l.mode IN ('AccessExclusiveLock', 'ExclusiveLock', 'ShareRowExclusiveLock', 'ShareLock')), '')
		  FROM pg_stat_activity a
		 WHERE a.pid = ANY (pg_blocking_pids($1))
		 ORDER BY a.pid LIMIT 3`, pid)
	if err != nil {
		return fallback, "?"
	}
	var bs []blocker
	for rows.Next() {
		var b blocker
		if err := rows.Scan(&b.pid, &b.app, &b.user, &b.state, &b.since, &b.query, &b.relations); err != nil {
			rows.Close()
			return fallback, "?"
		}
		bs = append(bs, b)
	}
	if rows.Err() != nil {
		return fallback, "?"
	}
	if len(bs) == 0 {
		if waitType == "" {
			return "", "" // it runs: nothing holds it up
		}
		return fmt.Sprintf("%s is waiting for PostgreSQL (%.0fs so far, on %s %s)", what, waitedSecs, waitType, waitEvent), waitType + " " + waitEvent
	}
	var who []string
	var pids []string
	for _, b := range bs {
		w := fmt.Sprintf("pid %d", b.pid)
		var about []string
		if b.app != "" {
			about = append(about, b.app)
		}
		if b.user != "" {
			about = append(about, "user "+b.user)
		}
		if b.state != "" {
			about = append(about, fmt.Sprintf("%s for %.0fs", b.state, b.since.Seconds()))
		}
		if b.relations != "" {
			about = append(about, "holding "+b.relations)
		}
		if q := strings.Join(strings.Fields(b.query), " "); q != "" {
			about = append(about, "its last statement: "+q)
		}
		if len(about) > 0 {
			w += " (" + strings.Join(about, "; ") + ")"
		}
		who = append(who, w)
		pids = append(pids, fmt.Sprint(b.pid))
	}
	lock := "a lock"
	if waitType == "Lock" && waitEvent != "" {
		lock = "a lock (" + waitEvent + ")"
	}
	return fmt.Sprintf("%s has waited %.0fs for %s held by another session: %s. learn goes on once it commits or ends (SELECT pg_terminate_backend(%s) ends it)",
		what, waitedSecs, lock, strings.Join(who, ", "), strings.Join(pids, "), pg_terminate_backend(")), lock + " " + strings.Join(pids, ",")
}
