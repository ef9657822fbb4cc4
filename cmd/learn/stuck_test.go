//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/learn-idempotency/learn/internal/pgfault"
)

// A workshop whose own PostgreSQL hangs (every process of the cluster
// stopped, as kill -STOP does) still ends on SIGTERM, promptly, and leaves
// no process of the cluster, stopped or not, and no cluster directory. Its
// attendees' runs cannot drop their schemas (the server does not answer):
// once the sessions have had their moment to end (SessionsSettle), the
// workshop stops the cluster under them, as learn serve does, instead of
// waiting out every run's clean-up first (three runs took 14 s before).
func TestWorkshopWithAStoppedPostgresEndsAndLeavesNothing(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	cmd, out := startWorkshopBin(t, bin, "--postgres", "local")
	m := clusterDir.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no cluster directory in:\n%s", out)
	}
	dir := strings.TrimRight(m[1], ")…,")
	port := joinLine.FindStringSubmatch(out)[1]
	for range 3 { // three runs, three schemas that cannot be dropped
		attendPlay(t, port)
	}

	pm, all := stopCluster(t, dir)

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // a workshop that never ends is the test's timeout
	// How soon it ends (the README's bound: the sessions' moment to end,
	// then pgtemp's kill of a server that hangs) is logged, not judged
	// here: a clock is no pass or fail.
	t.Logf("learn workshop ended %s after SIGTERM, exit %d", time.Since(start).Round(10*time.Millisecond), cmd.ProcessState.ExitCode())
	for _, p := range all {
		if processAlive(p) {
			t.Errorf("process %d of the cluster (postmaster %d) is still there", p, pm)
		}
	}
	assertGone(t, dir)
}

// stopCluster stops (SIGSTOP) every process of the cluster in dir, the
// postmaster and its children, as a hung server, and returns the
// postmaster's pid and all of them. They are killed when t ends, whatever
// the test found.
func stopCluster(t *testing.T, dir string) (pm int, all []int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pm, err = strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	kids, _ := exec.Command("pgrep", "-P", strconv.Itoa(pm)).Output()
	all = []int{pm}
	for _, f := range strings.Fields(string(kids)) {
		if p, err := strconv.Atoi(f); err == nil {
			all = append(all, p)
		}
	}
	if len(all) < 4 { // the postmaster, its workers and the clients' backends
		t.Fatalf("the cluster has processes %v; want the postmaster, its workers and the clients' backends", all)
	}
	pgfault.Hang(t, all...)
	return pm, all
}

// processAlive reports whether pid runs (a zombie, killed and waiting for
// init, does not).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// learn serve with its own PostgreSQL stopped (kill -STOP of every
// process of the cluster) ends on SIGTERM within the README's bound (5 s,
// and 5 s more for a PostgreSQL that no longer answers), exits 0 (its
// cluster went whole, schemas and all), and leaves no process of the
// cluster and no cluster directory.
func TestServeWithAStoppedPostgresEndsAndLeavesNothing(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	if os.Getenv("LEARN_TEST_DATABASE") != "" {
		t.Skip("learn serve runs on LEARN_TEST_DATABASE here, not on a cluster of its own")
	}
	p := startServe(t, buildLearn(t), "--addr", "127.0.0.1:0")
	pm, all := stopCluster(t, p.dir)
	start := time.Now()
	code := p.stop(syscall.SIGTERM)
	t.Logf("learn serve ended %s after SIGTERM, exit %d", time.Since(start).Round(10*time.Millisecond), code)
	if code != 0 {
		t.Errorf("exit %d; want 0 (nothing of learn's is left)\n%s", code, p.stderr)
	}
	// What keeps the README's bound: the instances are not waited for
	// beyond serve.StageClose; PostgreSQL is stopped under them.
	if !strings.Contains(p.stderr.String(), "did not answer within") {
		t.Errorf("learn serve did not stop its PostgreSQL under the API instances; its log:\n%s", p.stderr)
	}
	for _, pid := range all {
		if processAlive(pid) {
			t.Errorf("process %d of the cluster (postmaster %d) is still there", pid, pm)
		}
	}
	assertGone(t, p.dir)
}

// learn serve whose own PostgreSQL died (kill -9 of the postmaster) ends on
// SIGTERM with exit 0 and no warning: its schema could not be dropped, but
// it went with the cluster, which is removed; a warning there (it used to
// say to drop the schema by hand) would send the presenter after nothing.
func TestServeWhoseClusterDiedEndsWithoutAWarning(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	if os.Getenv("LEARN_TEST_DATABASE") != "" {
		t.Skip("learn serve runs on LEARN_TEST_DATABASE here, not on a cluster of its own")
	}
	p := startServe(t, buildLearn(t), "--addr", "127.0.0.1:0")
	b, err := os.ReadFile(filepath.Join(p.dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pm, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pm, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExited(t, pm)
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d; want 0 (the cluster went whole)\n%s", code, p.stderr)
	}
	if strings.Contains(p.stderr.String(), "level=WARN") {
		t.Errorf("a warning about a schema that went with the cluster:\n%s", p.stderr)
	}
	assertGone(t, p.dir)
}

// waitExited returns once process pid has ended: a pidfd becomes readable
// then, for a process that is not this one's child too.
func waitExited(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if err == unix.ESRCH {
			return // gone already
		}
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, -1)
		if err != unix.EINTR {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}
