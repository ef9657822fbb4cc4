//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/proc"
	"github.com/learn-idempotency/learn/pgtemp/internal/reap"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
)

// TestReapAfterLearnWasKilled: the cluster of a learn process that was
// SIGKILLed is removed by the next Start, which says so, and leaves no
// System V segment of that cluster behind.
func TestReapAfterLearnWasKilled(t *testing.T) {
	needLocal(t)
	opts := isolated(t, "")
	cmd, dir := startHelper(t, opts.tmpParent)
	helper := cmd.Process.Pid
	o, err := owner.Read(dir)
	if err != nil || o.LearnPID != helper || o.PMPID == 0 {
		t.Fatalf("owner file of the helper's cluster: %+v, %v", o, err)
	}
	if maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", o.PMPID)); err == nil && strings.Contains(string(maps), "/dev/shm/PostgreSQL.") {
		t.Errorf("the helper's postmaster keeps dynamic shared memory in /dev/shm, which SIGKILL would leave behind")
	}
	killHelper(t, cmd, dir)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed helper's directory is already gone (%v): nothing to reap", err)
	}

	var mu sync.Mutex
	var logs []string
	opts.Logf = func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		mu.Unlock()
		t.Logf(format, args...)
	}
	s := startT(t, opts)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the next Start the orphan %s still exists (%v)", dir, err)
	}
	want := fmt.Sprintf("removed an orphaned cluster of learn pid %d in %s", helper, dir)
	mu.Lock()
	if !strings.Contains(strings.Join(logs, "\n"), want) {
		t.Errorf("Start's log lacks %q:\n%s", want, strings.Join(logs, "\n"))
	}
	mu.Unlock()
	if segs := sysvSegmentsOf(t, o.PMPID); len(segs) > 0 {
		t.Errorf("System V segments of the killed cluster's postmaster remain: %v", segs)
	}
	queryString(t, connect(t, s.ConnString()), "SELECT 'the new cluster works'")
}

// TestReapLeavesLiveOwnersAlone: clusters whose learn is alive, another
// process or this one, are never touched.
func TestReapLeavesLiveOwnersAlone(t *testing.T) {
	needLocal(t)
	opts := isolated(t, "")
	_, other := startHelper(t, opts.tmpParent)
	own := startT(t, opts)

	rep, err := reap.Clusters(context.Background(), []string{opts.tmpParent}, clusterOf(own).Runner(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) > 0 {
		t.Fatalf("reap removed %v", rep.Removed)
	}
	for _, dir := range []string{other, clusterOf(own).Dir()} {
		found := false
		for _, d := range rep.InUse {
			found = found || d == dir
		}
		if !found {
			t.Errorf("reap did not report %s as in use: %+v", dir, rep)
		}
		if !reap.SocketAnswers(dir) {
			t.Errorf("the cluster in %s no longer answers", dir)
		}
	}
	queryString(t, connect(t, own.ConnString()), "SELECT 'still here'")
}

// TestReapPidReused: an owner file whose learn pid is alive but started at
// another time (the pid was reused) is an orphan; its postmaster, still
// running, is stopped, and nothing of the cluster remains.
func TestReapPidReused(t *testing.T) {
	needLocal(t)
	opts := isolated(t, "")
	s := startT(t, opts)
	c := clusterOf(s)
	stopWatching(c) // the learn that made it is gone: nobody watches it
	pm := c.PID()
	if len(sysvSegmentsOf(t, pm)) == 0 {
		t.Fatalf("no System V segment created by postmaster %d: the check below would mean nothing", pm)
	}
	fakeOwner(t, c.Dir(), os.Getpid(), "1", pm) // this pid, the wrong start time

	rep, err := reap.Clusters(context.Background(), []string{opts.tmpParent}, c.Runner(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != 1 || rep.Removed[0].Dir != c.Dir() || !rep.Removed[0].StoppedPostmaster {
		t.Fatalf("reap = %+v; want %s removed and its postmaster stopped", rep, c.Dir())
	}
	if !strings.Contains(rep.Removed[0].Why, "another process") {
		t.Errorf("Why = %q; want it to say the pid was reused", rep.Removed[0].Why)
	}
	assertClusterGone(t, c.Dir(), pm)
	if !c.Postmaster().Exited() {
		t.Errorf("postmaster %d still runs", pm)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after the cluster was reaped: %v", err)
	}
}

// TestReapRemovesSharedMemoryOfKilledPostmaster: a postmaster that was
// SIGKILLed (the OOM killer, say) leaves its System V segment; reaping the
// orphan removes it.
func TestReapRemovesSharedMemoryOfKilledPostmaster(t *testing.T) {
	needLocal(t)
	opts := isolated(t, "")
	s := startT(t, opts)
	c := clusterOf(s)
	stopWatching(c) // the learn that made it is killed too: nobody watches it
	pm := c.PID()
	syscall.Kill(-pm, syscall.SIGKILL)
	<-c.Postmaster().Done
	proc.WaitGroupGone(pm, 2*time.Second)
	if len(sysvSegmentsOf(t, pm)) == 0 {
		t.Fatalf("a SIGKILLed postmaster left no System V segment: the check below would mean nothing")
	}
	fakeOwner(t, c.Dir(), deadPID(t), "", pm)

	rep, err := reap.Clusters(context.Background(), []string{opts.tmpParent}, c.Runner(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != 1 || !rep.Removed[0].RemovedSharedMemory || rep.Removed[0].StoppedPostmaster {
		t.Fatalf("reap = %+v; want one orphan removed with its shared memory, nothing to stop", rep)
	}
	assertClusterGone(t, c.Dir(), pm)
}

// TestReapRules checks which directories reap removes, on directories made
// to look like each case.
func TestReapRules(t *testing.T) {
	run, err := runas.Current()
	if err != nil {
		t.Skip(err)
	}
	old := time.Now().Add(-2 * reap.OwnerlessGrace)
	tests := []struct {
		name    string
		make    func(t *testing.T, dir string)
		removed bool
	}{
		{"learn-101", func(t *testing.T, dir string) { // learn is this process
			mkdirs(t, dir+"/data")
			if err := owner.Write(dir, 0); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"learn-102", func(t *testing.T, dir string) { // learn is gone
			mkdirs(t, dir+"/data")
			fakeOwner(t, dir, deadPID(t), "", 0)
		}, true},
		{"learn-103", func(t *testing.T, dir string) { // same pid, other start time
			mkdirs(t, dir+"/data")
			fakeOwner(t, dir, os.Getpid(), "1", 0)
		}, true},
		{"learn-104", func(t *testing.T, dir string) { // no owner file, young: may be starting
			mkdirs(t, dir+"/data")
		}, false},
		{"learn-105", func(t *testing.T, dir string) { // no owner file, old, only a cluster's names
			mkdirs(t, dir+"/data/base")
			writeFile(t, dir+"/"+clusterdir.SocketName+".lock", "")
			age(t, old, dir+"/data", dir)
		}, true},
		{"learn-106", func(t *testing.T, dir string) { // no owner file, old, but something else in it
			mkdirs(t, dir+"/data")
			writeFile(t, dir+"/notes.txt", "mine")
			age(t, old, dir+"/data", dir)
		}, false},
		{"learn-107", func(t *testing.T, dir string) { // no owner file, old, its postmaster.pid names a process in its data directory
			mkdirs(t, dir+"/data")
			writeFile(t, dir+"/data/postmaster.pid", fmt.Sprintf("%d\n", sleeper(t, dir+"/data")))
			age(t, old, dir+"/data", dir)
		}, false},
		{"learn-110", func(t *testing.T, dir string) { // no owner file, old, its postmaster.pid names a process elsewhere (a reused pid)
			mkdirs(t, dir+"/data")
			writeFile(t, dir+"/data/postmaster.pid", fmt.Sprintf("%d\n", os.Getpid()))
			age(t, old, dir+"/data", dir)
		}, true},
		{"learn-108", func(t *testing.T, dir string) { // an owner file nobody can read as one
			mkdirs(t, dir)
			writeFile(t, dir+"/"+owner.File, "garbage\n")
			age(t, old, dir)
		}, true},
		{"learn-idempotency", func(t *testing.T, dir string) { // not a name learn gives clusters
			mkdirs(t, dir)
			fakeOwner(t, dir, deadPID(t), "", 0)
		}, false},
		{"learn-109", func(t *testing.T, dir string) { // a symbolic link to an orphan-looking directory
			target := t.TempDir()
			fakeOwner(t, target, deadPID(t), "", 0)
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	parent := t.TempDir()
	for _, tt := range tests {
		tt.make(t, filepath.Join(parent, tt.name))
	}
	rep, err := reap.Clusters(context.Background(), []string{parent}, run, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %+v", rep)
	for _, tt := range tests {
		_, err := os.Lstat(filepath.Join(parent, tt.name))
		if gone := errors.Is(err, os.ErrNotExist); gone != tt.removed {
			t.Errorf("%s: removed = %v, want %v", tt.name, gone, tt.removed)
		}
	}
}

// TestReapIgnoresOtherUsersFiles: as root, an owner file that root did not
// write (anyone may create /tmp/learn-1/learn.owner) never makes learn
// remove a directory or signal the process it names.
func TestReapIgnoresOtherUsersFiles(t *testing.T) {
	run, err := runas.Current()
	if err != nil || run.Cred == nil {
		t.Skip("only when learn runs as root")
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "learn-201")
	mkdirs(t, dir)
	fakeOwner(t, dir, deadPID(t), "", 0)
	if err := os.Chown(filepath.Join(dir, owner.File), run.UID, run.GID); err != nil {
		t.Fatal(err)
	}
	if _, err := reap.Clusters(context.Background(), []string{parent}, run, t.Logf); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a directory with an owner file root did not write was removed: %v", err)
	}
}

// TestCloseLeavesNoSharedMemory: the cluster's dynamic shared memory lives
// in its data directory, not in /dev/shm, and after Close no System V
// segment of its postmaster remains.
func TestCloseLeavesNoSharedMemory(t *testing.T) {
	needLocal(t)
	s := startT(t, isolated(t, ""))
	pm := clusterOf(s).PID()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pm))
	if err != nil {
		t.Skipf("no /proc maps: %v", err)
	}
	if !strings.Contains(string(maps), filepath.Join(clusterOf(s).Data(), "pg_dynshmem")) {
		t.Errorf("the postmaster maps no dynamic shared memory from %s/pg_dynshmem", clusterOf(s).Data())
	}
	if strings.Contains(string(maps), "/dev/shm/PostgreSQL.") {
		t.Errorf("the postmaster maps dynamic shared memory from /dev/shm/PostgreSQL.*")
	}
	if len(sysvSegmentsOf(t, pm)) == 0 {
		t.Fatalf("no System V segment created by postmaster %d: the check below would mean nothing", pm)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	assertClusterGone(t, clusterOf(s).Dir(), pm)
}

// TestCancelledStartsLeaveNoSharedMemory runs cancelled starts (cold: in
// initdb; warm: in the copy or the postmaster's start-up) in a helper in an
// IPC namespace of its own, where every System V segment is one of its
// clusters', and checks that none is left. (Without the namespace, other
// PostgreSQL servers on this machine would make the count meaningless.)
func TestCancelledStartsLeaveNoSharedMemory(t *testing.T) {
	t.Parallel()
	needLocal(t)
	if os.Geteuid() != 0 {
		t.Skip("an IPC namespace needs root")
	}
	opts := isolated(t, "")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+cancelHelper+opts.tmpParent)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWIPC}
	out, err := cmd.CombinedOutput()
	t.Logf("helper:\n%s", out)
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	if !strings.Contains(string(out), "segments left: 0\n") {
		t.Errorf("cancelled starts left System V segments")
	}
	if !strings.Contains(string(out), "cancelled: ") || strings.Contains(string(out), "cancelled: 0 ") {
		t.Errorf("no start was cancelled: the check means nothing")
	}
}

// cancelHelper prefixes helperEnv's value to make the helper run
// cancelledStarts instead of starting one cluster.
const cancelHelper = "cancel:"

// cancelledStarts is the helper's side of
// TestCancelledStartsLeaveNoSharedMemory: it prints how many starts were
// cancelled and how many System V segments are left in its namespace.
func cancelledStarts(parent string) int {
	cache, err := os.MkdirTemp(parent, "cache-")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer os.RemoveAll(cache)
	if s, err := Start(context.Background(), Options{Mode: Local, tmpParent: parent, cacheDir: cache}); err != nil {
		fmt.Println("error:", err)
		return 1
	} else {
		s.Close()
	}
	cancelled, total := 0, 0
	for _, warm := range []bool{true, false} {
		for _, d := range []time.Duration{0, 2, 5, 10, 20, 40, 80, 150, 300, 500} {
			c := cache
			if !warm {
				c, _ = os.MkdirTemp(parent, "cold-")
				defer os.RemoveAll(c)
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(d*time.Millisecond, cancel)
			s, err := Start(ctx, Options{Mode: Local, tmpParent: parent, cacheDir: c})
			cancel()
			total++
			switch {
			case err == nil:
				s.Close()
			case errors.Is(err, context.Canceled):
				cancelled++
			default:
				fmt.Println("error:", err)
				return 1
			}
		}
	}
	shm, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	lines := strings.Split(strings.TrimSpace(string(shm)), "\n")[1:]
	fmt.Printf("cancelled: %d of %d\n", cancelled, total)
	fmt.Printf("%s\nsegments left: %d\n", shm, len(lines))
	return 0
}

// sysvSegmentsOf lists the System V shared memory segments whose creator
// is pid, from /proc/sysvipc/shm.
func sysvSegmentsOf(t *testing.T, pid int) []string {
	t.Helper()
	raw, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		t.Skipf("no /proc/sysvipc/shm: %v", err)
	}
	var found []string
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == strconv.Itoa(pid) {
			found = append(found, line)
		}
	}
	return found
}

// assertClusterGone checks that the directory, the processes and the System
// V segment of the cluster whose postmaster was pm are gone.
func assertClusterGone(t *testing.T, dir string, pm int) {
	t.Helper()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists (%v)", dir, err)
	}
	if p := processesUsing(dir); len(p) > 0 {
		t.Errorf("processes remain: %v", p)
	}
	if segs := sysvSegmentsOf(t, pm); len(segs) > 0 {
		t.Errorf("System V segments of postmaster %d remain: %v", pm, segs)
	}
}

// fakeOwner writes an owner file naming learn pid with start ticks (""
// for none) and postmaster pm (0 for none, else with its real start ticks).
func fakeOwner(t *testing.T, dir string, pid int, ticks string, pm int) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "learn_pid=%d\n", pid)
	if ticks != "" {
		fmt.Fprintf(&b, "learn_start_ticks=%s\n", ticks)
	}
	if id := owner.BootID(); id != "" {
		fmt.Fprintf(&b, "boot_id=%s\n", id)
	}
	if pm > 0 {
		fmt.Fprintf(&b, "postmaster_pid=%d\npostmaster_start_ticks=%s\n", pm, owner.StartTicks(pm))
	}
	writeFile(t, filepath.Join(dir, owner.File), b.String())
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// sleeper starts a process in dir, as a postmaster runs in its data
// directory, and returns its pid; the test's cleanup ends it.
func sleeper(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

func mkdirs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// age sets the modification time of paths to when, in order (a directory's
// own mtime changes when something is created in it).
func age(t *testing.T, when time.Time, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
}
