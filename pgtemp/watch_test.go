//go:build linux

package pgtemp

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/internal/cluster"
	"github.com/learn-idempotency/learn/pgtemp/internal/proc"
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

// A local cluster's postmaster killed outright (kill -9) is noticed at
// once (Restarting, with how it ended) and started again on the same data:
// every transaction that had committed, the last ones just before the
// kill included, is there after the restart, and learn's schemas with it.
func TestKilledPostmasterIsStartedAgainWithItsData(t *testing.T) {
	needLocal(t)
	s := startT(t, isolated(t, ""))
	if h := s.Health(); h.State != Up || h.Exit != "" {
		t.Fatalf("a server just started: %+v", h)
	}
	ctx := context.Background()
	sc, err := s.NewSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, sc.ConnString())
	if _, err := conn.Exec(ctx, "CREATE TABLE committed (n int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	const rows = 300
	for n := range rows { // one transaction each, the last right before the kill
		if _, err := conn.Exec(ctx, "INSERT INTO committed VALUES ($1)", n); err != nil {
			t.Fatal(err)
		}
	}
	changed := s.HealthChanged()
	pid := s.Health().PID
	if b, err := os.ReadFile(clusterOf(s).Data() + "/postmaster.pid"); err != nil || !strings.HasPrefix(string(b), fmt.Sprintf("%d\n", pid)) {
		t.Fatalf("Health().PID = %d, and postmaster.pid holds %q (%v)", pid, b, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-changed
	if h := s.Health(); h.State == Up {
		t.Fatalf("after the kill: %+v, want it restarting or gone", h)
	}
	h, seen := waitHealth(t, s, Up)
	if h.Restarts != 1 || !strings.Contains(h.Exit, "killed by signal 9") || h.Exit == "" || len(seen) < 2 || seen[0] != Restarting {
		t.Errorf("after the restart: %+v (went through %v), want Up after Restarting, once, saying it was killed by signal 9", h, seen)
	}
	if h.PID == pid || h.PID == 0 {
		t.Errorf("the postmaster was %d, and Health().PID = %d after the restart", pid, h.PID)
	}
	var n int
	if err := connect(t, sc.ConnString()).QueryRow(ctx, "SELECT count(*) FROM committed").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != rows {
		t.Errorf("%d of %d committed rows after the restart", n, rows)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after a restart: %v", err)
	}
	if clusterOf(s).PID() != h.PID { // the watcher has returned: pm is Close's now
		t.Errorf("Health().PID = %d, the postmaster was %d", h.PID, clusterOf(s).PID())
	}
	if _, err := os.Stat(clusterOf(s).Dir()); !os.IsNotExist(err) {
		t.Errorf("the cluster directory %s remains: %v", clusterOf(s).Dir(), err)
	}
	if proc.ProcessesIn(clusterOf(s).Data(), clusterOf(s).Runner().UID) != nil {
		t.Errorf("processes of the cluster remain")
	}
}

// A postmaster that exits and cannot be started again (here its data
// directory's permissions, which PostgreSQL checks at its start, were
// opened to everyone) is Gone, with why and the end of the log; Close then
// removes everything all the same.
func TestPostmasterThatCannotStartAgainIsGone(t *testing.T) {
	needLocal(t)
	s := startT(t, isolated(t, ""))
	if err := os.Chmod(clusterOf(s).Data(), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(s.Health().PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h, seen := waitHealth(t, s, Gone)
	if h.Err == nil || !strings.Contains(h.Log, "permissions") || !strings.Contains(h.Exit, "killed by signal 9") {
		t.Errorf("gone: %+v (went through %v), want why, with the log", h, seen)
	}
	if sum := h.Summary(); !strings.Contains(sum, "could not start it again") {
		t.Errorf("Summary() = %q", sum)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(clusterOf(s).Dir()); !os.IsNotExist(err) {
		t.Errorf("the cluster directory %s remains: %v", clusterOf(s).Dir(), err)
	}
}

// A server that keeps exiting is not started again forever: past
// maxRestarts exits within restartWindow it is Gone, and says so.
func TestPostmasterThatKeepsExitingIsGone(t *testing.T) {
	needLocal(t)
	s := startT(t, isolated(t, ""))
	for i := range cluster.MaxRestarts + 1 {
		if h := s.Health(); h.State != Up {
			t.Fatalf("before kill %d: %+v", i+1, h)
		}
		changed := s.HealthChanged()
		if err := syscall.Kill(s.Health().PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-changed
		if i < cluster.MaxRestarts {
			waitHealth(t, s, Up)
		}
	}
	h, _ := waitHealth(t, s, Gone)
	if h.Restarts != cluster.MaxRestarts || h.Err == nil || !strings.Contains(h.Err.Error(), "times within") {
		t.Errorf("gone: %+v, want %d restarts and why not one more", h, cluster.MaxRestarts)
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
