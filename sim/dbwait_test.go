package sim

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/internal/pgfault"
	"github.com/learn-idempotency/learn/internal/syncbuf"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// holdAt holds every booking of instance in at point p until release is
// closed (or the request's context ends); each held booking is announced
// on the returned channel. The booking keeps its database connection, and
// from PointAfterLookup on the event's row lock, while it is held.
func holdAt(in *api.Instance, p engine.Point, release <-chan struct{}) <-chan engine.Request {
	held := make(chan engine.Request, 16)
	in.API.Engine.At = func(ctx context.Context, at engine.Point, req engine.Request) error {
		if at != p {
			return nil
		}
		held <- req
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return held
}

// answered is an answer to a request sent in the background.
type answered struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// sendAsync sends method path (with ada's token, key and body, if set) to
// url from a goroutine and delivers the answer on the returned channel.
func sendAsync(ctx context.Context, url, method, path, key, body string) <-chan answered {
	out := make(chan answered, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, method, url+path, strings.NewReader(body))
		if err != nil {
			out <- answered{err: err}
			return
		}
		req.Header.Set("Authorization", authAda)
		if key != "" {
			req.Header.Set(api.HeaderIdempotencyKey, key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- answered{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- answered{status: resp.StatusCode, header: resp.Header, body: b, err: err}
	}()
	return out
}

// must503 checks a 503 with Retry-After and code.
func must503(t *testing.T, what string, a answered, code string) {
	t.Helper()
	if a.err != nil {
		t.Fatalf("%s: %v", what, a.err)
	}
	if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") != api.RetryAfter {
		t.Fatalf("%s: %d (Retry-After %q) %s, want 503 with Retry-After %s", what, a.status, a.header.Get("Retry-After"), a.body, api.RetryAfter)
	}
	if e := decodeAPIError(t, a.body); e.Code != code || !strings.Contains(e.Message, "retry in a moment with the same idempotency key") {
		t.Errorf("%s: %+v, want %s", what, e, code)
	}
}

// must200 checks a booking that succeeded, first time or replay as said.
func must200(t *testing.T, what string, a answered, replayed bool) booked {
	t.Helper()
	res, ok := readBooked(a.status, a.header, a.body)
	if a.err != nil || !ok || res.Replayed != replayed {
		t.Fatalf("%s: %d %v %s, want 200 replayed=%v", what, a.status, a.err, a.body, replayed)
	}
	return res
}

// With DBWait, a request waits that long for one of the pool's
// connections, then gets 503 database_busy with Retry-After, and nothing
// is written; GET /events too, which needs no lock, only a connection.
func TestDBWaitIsBounded(t *testing.T) {
	s := newRawStage(t, StageConfig{MaxConns: 1, Limits: api.ServeLimits{DBWait: 100 * time.Millisecond}})
	url, good := s.Instances[0].URL, s.expand(`{"event_id": {ev}, "quantity": 2}`)
	release := make(chan struct{})
	held := holdAt(s.Instances[0], engine.PointAfterLookup, release)
	first := sendAsync(t.Context(), url, "POST", "/bookings", uuid.NewString(), good)
	<-held // it has the pool's one connection

	must503(t, "GET /events", <-sendAsync(t.Context(), url, "GET", "/events", "", ""), api.CodeDatabaseBusy)
	other := uuid.NewString()
	must503(t, "another booking", <-sendAsync(t.Context(), url, "POST", "/bookings", other, good), api.CodeDatabaseBusy)
	if !strings.Contains(s.logs.String(), `level=WARN msg="booking failed" instance=api-1`) {
		t.Errorf("no warning in the log:\n%s", s.logs)
	}

	close(release)
	must200(t, "the held booking", <-first, false)
	must200(t, "the refused key, later", <-sendAsync(t.Context(), url, "POST", "/bookings", other, good), false)
	if got := s.tables(t); !strings.HasPrefix(got, "2 bookings; seats "+s.expand("{ev}")+":6") {
		t.Errorf("tables %s, want 2 bookings and 6 seats left", got)
	}
}

// With LockWait, a booking that waits that long for the event's row lock
// (taken here from outside the API) is rolled back and answered 503
// event_busy with Retry-After; a read, which takes no lock, is answered
// meanwhile; once the lock is gone the same key books.
func TestLockWaitIsBounded(t *testing.T) {
	s := newRawStage(t, StageConfig{Limits: api.ServeLimits{LockWait: 100 * time.Millisecond, DBWait: time.Minute}})
	url, good := s.Instances[0].URL, s.expand(`{"event_id": {ev}, "quantity": 2}`)
	tx, err := s.Admin.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(t.Context()))
	if _, err := tx.Exec(t.Context(), `SELECT 1 FROM events WHERE id = $1 FOR UPDATE`, s.ids["{ev}"]); err != nil {
		t.Fatal(err)
	}

	key := uuid.NewString()
	for range 5 { // more than the pool's 4 connections: each is given back
		must503(t, "booking a locked event", <-sendAsync(t.Context(), url, "POST", "/bookings", key, good), api.CodeEventBusy)
	}
	if a := <-sendAsync(t.Context(), url, "GET", "/events", "", ""); a.status != 200 {
		t.Fatalf("GET /events while the event is locked: %d %s", a.status, a.body)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	must200(t, "the same key once the lock is gone", <-sendAsync(t.Context(), url, "POST", "/bookings", key, good), false)
}

// LockWait bounds each booking's whole wait for the event's row lock, not
// each lock of the queue it waits in: behind a lock held 1.5 LockWait,
// every one of several bookings queued at once is answered 503 event_busy
// and none books. (With lock_timeout as the bound, the second in the
// queue waited first for the first's tuple lock, then, once that one gave
// up, again for the holder, with a fresh timer: it booked once the lock
// was released, as the third and the fourth did.) The hold is timed by
// PostgreSQL (pg_sleep inside the holder's transaction), once PostgreSQL
// reports every booking waiting for a lock.
func TestLockWaitBoundsTheWholeQueue(t *testing.T) {
	const queued, lockWait = 4, time.Second
	s := newRawStage(t, StageConfig{MaxConns: queued, Limits: api.ServeLimits{LockWait: lockWait, DBWait: time.Minute}})
	url, good := s.Instances[0].URL, s.expand(`{"event_id": {ev}, "quantity": 1}`)
	pids := backendPIDs(t, s.Instances[0].API.Engine.Pool())

	holder, err := pgx.Connect(t.Context(), s.Schema.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.WithoutCancel(t.Context()))
	tx, err := holder.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(t.Context()))
	if _, err := tx.Exec(t.Context(), `SELECT 1 FROM events WHERE id = $1 FOR UPDATE`, s.ids["{ev}"]); err != nil {
		t.Fatal(err)
	}
	var answers []<-chan answered
	for range queued {
		answers = append(answers, sendAsync(t.Context(), url, "POST", "/bookings", uuid.NewString(), good))
	}
	for waiting := 0; waiting < queued; {
		err := s.Admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1) AND wait_event_type = 'Lock'`, pids).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(t.Context(), `SELECT pg_sleep($1)`, (lockWait + lockWait/2).Seconds()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i, a := range answers {
		must503(t, fmt.Sprintf("booking %d of the queue", i+1), <-a, api.CodeEventBusy)
	}
	if got := s.tables(t); !strings.HasPrefix(got, "0 bookings; seats "+s.expand("{ev}")+":10") {
		t.Errorf("tables %s, want no booking and 10 seats left", got)
	}
}

// backendPIDs opens every connection of pool and returns their backends'
// process ids.
func backendPIDs(t *testing.T, pool *pgxpool.Pool) []uint32 {
	t.Helper()
	var taken []*pgxpool.Conn
	for range pool.Config().MaxConns {
		c, err := pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, c)
	}
	var pids []uint32
	for _, c := range taken {
		pids = append(pids, c.Conn().PgConn().PID())
		c.Release()
	}
	return pids
}

// A connection that PostgreSQL closed while it sat idle in the pool (here
// with pg_terminate_backend: the FATAL 57P01 "terminating connection due
// to administrator command" a restart sends) is replaced before a request
// uses it: no request gets a 500, however soon after it comes.
func TestDeadIdleConnectionsAreReplaced(t *testing.T) {
	s := newRawStage(t, StageConfig{})
	big, err := s.AddEvent(t.Context(), "Big room", 100, s.Clock.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	s.ids["{big}"] = big
	url, good := s.Instances[0].URL, s.expand(`{"event_id": {big}, "quantity": 1}`)
	pool := s.Instances[0].API.Engine.Pool()
	for round := range 3 {
		// Open every connection of the pool: take them all at once, and
		// give them back.
		var taken []*pgxpool.Conn
		for range pool.Config().MaxConns {
			c, err := pool.Acquire(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			taken = append(taken, c)
		}
		for _, c := range taken {
			c.Release()
		}

		idle := pool.AcquireAllIdle(t.Context())
		var pids []uint32
		for _, c := range idle {
			pids = append(pids, c.Conn().PgConn().PID())
			c.Release()
		}
		if len(pids) != int(pool.Config().MaxConns) {
			t.Fatalf("round %d: %d idle connections, want %d", round, len(pids), pool.Config().MaxConns)
		}
		if _, err := s.Admin.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid`, pids); err != nil {
			t.Fatal(err)
		}
		for { // until every one of them has exited
			var left int
			if err := s.Admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])`, pids).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left == 0 {
				break
			}
		}

		for _, r := range []struct{ method, path, key, body string }{
			{"GET", "/events", "", ""},
			{"POST", "/bookings", uuid.NewString(), good},
			{"GET", "/bookings", "", ""},
			{"GET", "/events/" + s.expand("{ev}"), "", ""},
			{"POST", "/bookings", uuid.NewString(), good},
		} {
			if a := <-sendAsync(t.Context(), url, r.method, r.path, r.key, r.body); a.err != nil || a.status != 200 {
				t.Fatalf("round %d, %s %s after the connections died: %d %v %s", round, r.method, r.path, a.status, a.err, a.body)
			}
		}
	}
	if strings.Contains(s.logs.String(), "level=ERROR") {
		t.Errorf("errors in the log:\n%s", s.logs)
	}
}

// A connection that dies under a booking without a word from the server
// (here the proxy closes it as the booking's next statements are on their
// way) is answered 503 database_unavailable with Retry-After, and the
// answer does not claim that nothing was stored: the outcome is unknown to
// the API, and the same key settles it. The retry books exactly once.
func TestConnectionLostMidBookingIs503(t *testing.T) {
	for _, step := range []string{"FOR UPDATE", "INSERT INTO bookings"} {
		t.Run(step, func(t *testing.T) {
			proxy := pgfault.Start(t, testDB.ConnString(), pgfault.Rule{Match: step, Action: pgfault.Drop})
			db := &faultDB{t: t, proxy: proxy, app: "lost-" + strings.Fields(step)[0]}
			logs := &syncbuf.Buffer{}
			st, err := NewStage(t.Context(), db, StageConfig{Log: slog.NewTextHandler(logs, nil)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			ev, err := st.AddEvent(t.Context(), "Test night", 10, st.Clock.Now().Add(24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			s := &apiStage{Stage: st, ids: map[string]int64{"{ev}": ev}}
			url, good, key := st.Instances[0].URL, s.expand(`{"event_id": {ev}, "quantity": 2}`), uuid.NewString()

			a := <-sendAsync(t.Context(), url, "POST", "/bookings", key, good)
			if !proxy.Fired() {
				t.Fatalf("the proxy never saw %q", step)
			}
			must503(t, "the booking whose connection died", a, api.CodeDatabaseUnavailable)
			if e := decodeAPIError(t, a.body); strings.Contains(e.Message, "nothing was stored") ||
				!strings.Contains(e.Message, "not known") {
				t.Errorf("message %q: want it to say the outcome is not known, never that nothing was stored", e.Message)
			}
			must200(t, "the retry with the same key", <-sendAsync(t.Context(), url, "POST", "/bookings", key, good), false)
			if got := s.tables(t); !strings.HasPrefix(got, "1 bookings; seats "+s.expand("{ev}")+":8") {
				t.Errorf("tables %s, want 1 booking and 8 seats left", got)
			}
		})
	}
}

// A booking whose own database connection PostgreSQL ended (here with
// pg_terminate_backend while it waits for the event's row lock: FATAL
// 57P01) is answered 503 database_unavailable with what is known, that
// PostgreSQL ended this connection, never that PostgreSQL is restarting;
// the same key then books once.
func TestOneEndedConnectionIsSaidAsSuch(t *testing.T) {
	s := newRawStage(t, StageConfig{})
	url, good, key := s.Instances[0].URL, s.expand(`{"event_id": {ev}, "quantity": 2}`), uuid.NewString()
	pids := backendPIDs(t, s.Instances[0].API.Engine.Pool())
	tx, err := s.Admin.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(t.Context()))
	if _, err := tx.Exec(t.Context(), `SELECT 1 FROM events WHERE id = $1 FOR UPDATE`, s.ids["{ev}"]); err != nil {
		t.Fatal(err)
	}
	answer := sendAsync(t.Context(), url, "POST", "/bookings", key, good)
	var pid int
	for pid == 0 {
		err := s.Admin.QueryRow(t.Context(), `SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE pid = ANY($1) AND wait_event_type = 'Lock'`, pids).Scan(&pid)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Admin.Exec(t.Context(), `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	a := <-answer
	must503(t, "the booking whose connection was ended", a, api.CodeDatabaseUnavailable)
	if e := decodeAPIError(t, a.body); strings.Contains(e.Message, "restarting") || !strings.Contains(e.Message, "57P01") || !strings.Contains(e.Message, "ended this request's database connection") {
		t.Errorf("message %q: want what is known (57P01, this connection ended), not a restart", e.Message)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	must200(t, "the retry with the same key", <-sendAsync(t.Context(), url, "POST", "/bookings", key, good), false)
	if got := s.tables(t); !strings.HasPrefix(got, "1 bookings; seats "+s.expand("{ev}")+":8") {
		t.Errorf("tables %s, want 1 booking and 8 seats left", got)
	}
}
