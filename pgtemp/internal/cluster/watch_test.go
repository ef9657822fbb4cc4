//go:build linux

package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/learn-idempotency/learn/internal/pgfault"
	"github.com/learn-idempotency/learn/pgtemp/internal/proc"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// startC starts a cluster of the binaries here (needBinaries) under a
// fresh parent, with the user's real template cache; it is closed when the
// test ends.
func startC(t *testing.T) *way.Instance {
	t.Helper()
	bin := needBinaries(t)
	parent, err := os.MkdirTemp("", "pgtemp-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(parent, 0o755) // the cluster user must be able to enter it
	t.Cleanup(func() { os.RemoveAll(parent) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, &way.Env{TmpParent: parent, Logf: t.Logf, Started: time.Now()}, Spec{Bin: bin, Label: "test PostgreSQL " + bin.Version})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func clusterOf(s *way.Instance) *Cluster { return s.Impl.(*Cluster) }

func health(s *way.Instance) way.Health {
	h, _ := s.Health.Get()
	return h
}

func changedC(s *way.Instance) <-chan struct{} {
	_, ch := s.Health.Get()
	return ch
}

// waitHealth waits until the server's Health is in state want, and
// returns every state it went through on the way (want last).
func waitHealth(t *testing.T, s *way.Instance, want way.State) (way.Health, []way.State) {
	t.Helper()
	var seen []way.State
	deadline := time.After(time.Minute)
	for {
		h, ch := s.Health.Get()
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

func connect(t testing.TB, connString string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// A local cluster's postmaster killed outright (kill -9) is noticed at
// once (Restarting, with how it ended) and started again on the same data:
// every transaction that had committed, the last ones just before the
// kill included, is there after the restart, and learn's schemas with it.
func TestKilledPostmasterIsStartedAgainWithItsData(t *testing.T) {
	s := startC(t)
	if h := health(s); h.State != way.Up || h.Exit != "" {
		t.Fatalf("a server just started: %+v", h)
	}
	ctx := context.Background()
	conn := connect(t, s.ConnString)
	if _, err := conn.Exec(ctx, "CREATE TABLE committed (n int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	const rows = 300
	for n := range rows { // one transaction each, the last right before the kill
		if _, err := conn.Exec(ctx, "INSERT INTO committed VALUES ($1)", n); err != nil {
			t.Fatal(err)
		}
	}
	changed := changedC(s)
	pid := health(s).PID
	if b, err := os.ReadFile(clusterOf(s).Data() + "/postmaster.pid"); err != nil || !strings.HasPrefix(string(b), fmt.Sprintf("%d\n", pid)) {
		t.Fatalf("Health().PID = %d, and postmaster.pid holds %q (%v)", pid, b, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-changed
	if h := health(s); h.State == way.Up {
		t.Fatalf("after the kill: %+v, want it restarting or gone", h)
	}
	h, seen := waitHealth(t, s, way.Up)
	if h.Restarts != 1 || !strings.Contains(h.Exit, "killed by signal 9") || h.Exit == "" || len(seen) < 2 || seen[0] != way.Restarting {
		t.Errorf("after the restart: %+v (went through %v), want Up after Restarting, once, saying it was killed by signal 9", h, seen)
	}
	if h.PID == pid || h.PID == 0 {
		t.Errorf("the postmaster was %d, and Health().PID = %d after the restart", pid, h.PID)
	}
	var n int
	if err := connect(t, s.ConnString).QueryRow(ctx, "SELECT count(*) FROM committed").Scan(&n); err != nil {
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
	s := startC(t)
	if err := os.Chmod(clusterOf(s).Data(), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(health(s).PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h, seen := waitHealth(t, s, way.Gone)
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
	s := startC(t)
	for i := range MaxRestarts + 1 {
		if h := health(s); h.State != way.Up {
			t.Fatalf("before kill %d: %+v", i+1, h)
		}
		changed := changedC(s)
		if err := syscall.Kill(health(s).PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-changed
		if i < MaxRestarts {
			waitHealth(t, s, way.Up)
		}
	}
	h, _ := waitHealth(t, s, way.Gone)
	if h.Restarts != MaxRestarts || h.Err == nil || !strings.Contains(h.Err.Error(), "times within") {
		t.Errorf("gone: %+v, want %d restarts and why not one more", h, MaxRestarts)
	}
}

// A cluster whose every process is stopped (SIGSTOP: a hung server, or a
// trial's kill -STOP) cannot shut down on request: Close then kills it,
// the backends too, which lead sessions of their own and so are outside the
// postmaster's process group. Nothing is left running, stopped or not.
func TestCloseKillsAStoppedClusterWhole(t *testing.T) {
	s := startC(t)
	conn := connect(t, s.ConnString) // one backend of a client
	_ = conn
	pm := clusterOf(s).PID()
	kids := proc.ChildPIDs(pm)
	if len(kids) < 3 { // checkpointer, background writer, walwriter, the client's backend…
		t.Fatalf("the postmaster %d has %d children %v; want its workers and the client's backend", pm, len(kids), kids)
	}
	all := append([]int{pm}, kids...)
	pgfault.Hang(t, all...)
	s.Close()
	for _, p := range all {
		if proc.Running(p) {
			t.Errorf("process %d of the cluster (postmaster %d) is still there after Close", p, pm)
		}
	}
	if _, err := os.Stat(clusterOf(s).Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cluster's directory %s: %v; want it removed", clusterOf(s).Dir(), err)
	}
}
