//go:build linux

package pgtemp

import (
	"bufio"
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

	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/proc"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
	"golang.org/x/sys/unix"
)

func TestLocalCluster(t *testing.T) {
	needLocal(t)
	opts := isolated(t, "")
	s := startT(t, opts)
	c := clusterOf(s)
	if s.Mode() != Local || c == nil {
		t.Fatalf("Mode() = %s, want local", s.Mode())
	}
	t.Logf("%s; ready in %s (initdb ran: %v)", s.Describe(), s.ReadyIn(), s.RanInitdb())
	for _, want := range []string{c.Bin().Version, c.Bin().Dir, c.Dir(), c.Runner().Name} {
		if !strings.Contains(s.Describe(), want) {
			t.Errorf("Describe() = %q lacks %q", s.Describe(), want)
		}
	}
	if s.ReadyIn() <= 0 {
		t.Errorf("ReadyIn() = %s", s.ReadyIn())
	}

	conn := connect(t, s.ConnString())
	if got := queryString(t, conn, "SELECT (40 + 2)::text"); got != "42" {
		t.Errorf("SELECT 40 + 2 = %s", got)
	}
	if got := queryString(t, conn, "SHOW listen_addresses"); got != "" {
		t.Errorf("listen_addresses = %q, want '' (no TCP)", got)
	}
	if got := queryString(t, conn, "SHOW fsync"); got != "off" {
		t.Errorf("fsync = %q, want off", got)
	}
	if got := queryString(t, conn, "SELECT current_user::text"); got != "learn" {
		t.Errorf("current_user = %q, want learn", got)
	}
	if got := queryString(t, conn, "SHOW server_encoding"); got != "UTF8" {
		t.Errorf("server_encoding = %q, want UTF8", got)
	}

	for _, d := range []string{c.Dir(), c.Data()} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", d, fi.Mode().Perm())
		}
		if uid := int(fi.Sys().(*syscall.Stat_t).Uid); uid != c.Runner().UID {
			t.Errorf("%s is owned by uid %d, want the cluster user %s", d, uid, c.Runner())
		}
	}
	if os.Geteuid() == 0 && c.Runner().UID == 0 {
		t.Errorf("learn runs as root and so does the cluster")
	}
	ownerText, err := os.ReadFile(filepath.Join(c.Dir(), owner.File))
	if err != nil || !strings.Contains(string(ownerText), fmt.Sprintf("learn_pid=%d\n", os.Getpid())) ||
		!strings.Contains(string(ownerText), fmt.Sprintf("postmaster_pid=%d\n", c.PID())) {
		t.Errorf("%s = %q, %v; want learn's and the postmaster's pids", owner.File, ownerText, err)
	}
	if len(processesUsing(c.Dir())) == 0 {
		t.Fatalf("processesUsing finds no process of the running cluster: the check below would mean nothing")
	}
	conn.Close(context.Background())

	// Close from several goroutines at once, then once more.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.Close() }()
	}
	wg.Wait()
	for _, err := range append(errs, s.Close()) {
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close %s still exists (%v)", c.Dir(), err)
	}
	if p := processesUsing(c.Dir()); len(p) > 0 {
		t.Errorf("after Close processes remain: %v", p)
	}
	if _, err := s.NewSchema(context.Background()); err == nil {
		t.Errorf("NewSchema after Close succeeded")
	}
}

func TestWarmStartCopiesTemplate(t *testing.T) {
	t.Parallel()
	bin := needLocal(t)
	cache := t.TempDir()

	cold := startT(t, isolated(t, cache))
	if !cold.RanInitdb() {
		t.Errorf("first start with an empty cache did not run initdb")
	}
	tmpl := template.Path(cache, bin.Major, clusterOf(cold).Runner().UID)
	if !template.Usable(tmpl, bin.Major) {
		t.Fatalf("no usable template in %s after the first start", tmpl)
	}
	if err := cold.Close(); err != nil {
		t.Fatal(err)
	}

	warm := startT(t, isolated(t, cache))
	if warm.RanInitdb() {
		t.Errorf("second start ran initdb instead of copying the template")
	}
	conn := connect(t, warm.ConnString())
	queryString(t, conn, "SELECT 'ok'")
	t.Logf("cold start %s, warm start %s", cold.ReadyIn(), warm.ReadyIn())
}

func TestBrokenTemplateIsRebuilt(t *testing.T) {
	t.Parallel()
	bin := needLocal(t)
	cache := t.TempDir()
	run, err := runas.Current()
	if err != nil {
		t.Fatal(err)
	}
	// A template that passes the quick check but cannot start.
	tmpl := template.Path(cache, bin.Major, run.UID)
	os.MkdirAll(filepath.Join(tmpl, "global"), 0o700)
	os.WriteFile(filepath.Join(tmpl, "PG_VERSION"), []byte(bin.Major+"\n"), 0o600)
	os.WriteFile(filepath.Join(tmpl, "global", "pg_control"), []byte("garbage"), 0o600)

	s := startT(t, isolated(t, cache))
	if !s.RanInitdb() {
		t.Errorf("a broken template did not lead to initdb")
	}
	queryString(t, connect(t, s.ConnString()), "SELECT 'ok'")
	if fi, err := os.Stat(filepath.Join(tmpl, "global", "pg_control")); err != nil || fi.Size() < 512 {
		t.Errorf("template was not rebuilt: pg_control %v, %v", fi, err)
	}
}

func TestStartCancelledLeavesNothing(t *testing.T) {
	needLocal(t)
	warmCache := t.TempDir()
	s := startT(t, isolated(t, warmCache)) // make the template
	s.Close()

	delays := []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond,
		50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	for _, warm := range []bool{true, false} {
		for _, d := range delays {
			t.Run(fmt.Sprintf("warm=%v/after=%s", warm, d), func(t *testing.T) {
				cache := warmCache
				if !warm {
					cache = t.TempDir() // empty: cancel lands in initdb
				}
				opts := isolated(t, cache)
				opts.Logf = nil
				shmBefore := posixShm()
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(d, cancel)
				s, err := Start(ctx, opts)
				cancel()
				switch {
				case err == nil:
					s.Close() // Start won the race
				case !errors.Is(err, context.Canceled):
					t.Fatalf("Start after cancel = %v, want context.Canceled", err)
				}
				if entries, _ := os.ReadDir(opts.tmpParent); len(entries) > 0 {
					t.Errorf("left behind in %s: %v", opts.tmpParent, entries)
				}
				if p := processesUsing(opts.tmpParent); len(p) > 0 {
					t.Errorf("processes left behind: %v", p)
				}
				// A SIGKILLed initdb left its bootstrap backend's POSIX
				// shared memory in /dev/shm. Another package's initdb
				// may hold a file of its own for a moment: only one that
				// stays counts.
				if left := waitShmGone(t, shmBefore, 10*time.Second); len(left) > 0 {
					t.Errorf("shared memory left in /dev/shm: %v", left)
				}
			})
		}
	}
}

// helperEnv makes the test binary a stand-in for learn that starts a cluster,
// prints its directory and waits to be killed.
const helperEnv = "LEARN_PGTEMP_HELPER_PARENT"

func helperProcess() int {
	if parent, ok := strings.CutPrefix(os.Getenv(helperEnv), cancelHelper); ok {
		return cancelledStarts(parent)
	}
	if tmpl, ok := strings.CutPrefix(os.Getenv(helperEnv), templateHelper); ok {
		return templateWriter(tmpl)
	}
	s, err := Start(context.Background(), Options{Mode: Local, tmpParent: os.Getenv(helperEnv)})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("dir:", clusterOf(s).Dir())
	select {}
}

// startHelper starts a stand-in for learn (helperProcess) that starts a
// cluster under parent, and returns it with the cluster's directory. The
// test's cleanup kills it if the test did not.
func startHelper(t *testing.T, parent string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "dir: ") {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	dir := strings.TrimSpace(strings.TrimPrefix(line, "dir: "))
	if len(processesUsing(dir)) == 0 {
		t.Fatalf("no cluster processes in %s", dir)
	}
	return cmd, dir
}

// killHelper kills a helper outright, as SIGKILL or the OOM killer would end
// learn, and waits until its cluster's processes are gone: the postmaster
// gets SIGQUIT from the kernel when learn dies.
func killHelper(t *testing.T, cmd *exec.Cmd, dir string) {
	t.Helper()
	pids := pidsUsing(dir)
	cmd.Process.Kill() // SIGKILL: learn gets no chance to clean up
	cmd.Wait()
	proc.WaitEnded(pids, 10*time.Second) // each pid's end, told by the kernel (pidfd)
	if left := processesUsing(dir); len(left) > 0 {
		t.Fatalf("postmaster outlived learn by 10 s: %v", left)
	}
}

// pidsUsing is processesUsing's processes, by pid.
func pidsUsing(dir string) []int {
	var pids []int
	for _, p := range processesUsing(dir) {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestPostmasterDiesWithLearn(t *testing.T) {
	needLocal(t)
	opts := isolated(t, "")
	cmd, dir := startHelper(t, opts.tmpParent)
	killHelper(t, cmd, dir)
	// The directory stays; the next Start reaps it (TestReapAfterLearnWasKilled).
}

// A workshop raises max_connections for its attendees' runs; the default
// leaves room for a race of 100 copies.
func TestMaxConnectionsIsTheServers(t *testing.T) {
	t.Parallel()
	needLocal(t)
	cache := t.TempDir()
	for _, tc := range []struct{ set, want int }{{0, DefaultMaxConnections}, {600, 600}} {
		opts := isolated(t, cache)
		opts.MaxConnections = tc.set
		s := startT(t, opts)
		if got := queryString(t, connect(t, s.ConnString()), "SHOW max_connections"); got != fmt.Sprint(tc.want) {
			t.Errorf("MaxConnections %d: max_connections = %s, want %d", tc.set, got, tc.want)
		}
		limit, err := s.ConnectionLimit(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if want := tc.want - 3; limit != want { // superuser_reserved_connections is 3 by default
			t.Errorf("MaxConnections %d: ConnectionLimit = %d, want %d", tc.set, limit, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// posixShm lists PostgreSQL's POSIX shared memory files in /dev/shm.
func posixShm() map[string]bool {
	names, _ := filepath.Glob("/dev/shm/PostgreSQL.*")
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return set
}

// newShm lists the files of posixShm that were not in before.
func newShm(before map[string]bool) []string {
	var out []string
	for n := range posixShm() {
		if !before[n] {
			out = append(out, n)
		}
	}
	return out
}

// waitShmGone waits until every file in /dev/shm that was not there before
// has gone, woken by the kernel's deletion events (inotify), for at most
// d, and returns those that remain.
func waitShmGone(t *testing.T, before map[string]bool, d time.Duration) []string {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	defer unix.Close(fd)
	// The watch comes before each look, so no deletion goes unseen.
	if _, err := unix.InotifyAddWatch(fd, "/dev/shm", unix.IN_DELETE|unix.IN_MOVED_FROM); err != nil {
		return newShm(before) // no /dev/shm to watch: nothing can be left there
	}
	deadline := time.Now().Add(d)
	buf := make([]byte, 64<<10)
	for {
		left := newShm(before)
		ms := int(time.Until(deadline).Milliseconds())
		if len(left) == 0 || ms <= 0 {
			return left
		}
		if _, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatalf("poll: %v", err)
		}
		for {
			if _, err := unix.Read(fd, buf); err != nil {
				break // EAGAIN: every event read
			}
		}
	}
}
