//go:build linux

package pgtemp

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/internal/cluster"
)

// stopWatching stops the watcher of c, as if the learn that started c were
// gone: a test that kills c's postmaster to play a killed learn's cluster
// must not see it started again.
func stopWatching(c *cluster.Cluster) { c.StopWatching() }

// waitHealth waits until the server's Health is in state want, and
// returns every state it went through on the way (want last).
func waitHealth(t *testing.T, s *Server, want State) (Health, []State) {
	t.Helper()
	var seen []State
	deadline := time.After(time.Minute)
	for {
		ch := s.HealthChanged()
		h := s.Health()
		if len(seen) == 0 || seen[len(seen)-1] != h.State {
			seen = append(seen, h.State)
		}
		if h.State == want {
			return h, seen
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the server never got %s: %+v (went through %v)", want, h, seen)
		}
	}
}

// A cluster whose disk fills up (TMPDIR on a small tmpfs) fails as
// PostgreSQL fails: its WAL cannot grow, it stops every backend and tries
// to recover, which needs room too. learn says at once that it exited,
// with the log that says why (no space left on device), and the server is
// Gone once it cannot start again; or, should the recovery make room, Up
// again. Either way nothing hangs, and Close removes everything.
func TestFullDiskServerIsSaidAsIs(t *testing.T) {
	needLocal(t)
	parent := mountTmpfs(t, "52m", "")
	opts := isolated(t, "")
	opts.tmpParent = parent
	s := startT(t, opts)
	ctx := context.Background()
	conn := connect(t, s.ConnString())
	changed := s.HealthChanged()
	if _, err := conn.Exec(ctx, "CREATE TABLE fill (x text)"); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; err == nil; i++ { // a megabyte of rows, and its WAL, each time
		if i == 100 {
			t.Fatal("52 MB held 100 MB of rows")
		}
		_, err = conn.Exec(ctx, "INSERT INTO fill SELECT repeat(md5(g::text), 32) FROM generate_series(1, 1000) g")
	}
	t.Logf("the statement that filled the disk: %v", err)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Logf("the server went on after the full disk: %+v", s.Health())
		return // PostgreSQL refused the statement and stayed up: nothing to say
	}
	h := s.Health()
	for h.State == Restarting {
		h, _ = waitHealth(t, s, Gone)
	}
	t.Logf("health: %s; log:\n%s", h.Summary(), h.Log)
	if !strings.Contains(h.Log+fmt.Sprint(h.Err), "No space left on device") {
		t.Errorf("health %+v: want the log saying why", h)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(clusterOf(s).Dir()); !os.IsNotExist(err) {
		t.Errorf("the cluster directory %s remains: %v", clusterOf(s).Dir(), err)
	}
}
