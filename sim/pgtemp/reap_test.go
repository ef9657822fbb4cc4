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
	"syscall"
	"testing"
	"time"
)

// TestCloseLeavesNoSharedMemory: the cluster's dynamic shared memory lives
// in its data directory, not in /dev/shm, and after Close no System V
// segment of its postmaster remains.
func TestCloseLeavesNoSharedMemory(t *testing.T) {
	needLocal(t)
	s := startT(t, isolated(t, ""))
	pm := s.local.pm.pid()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pm))
	if err != nil {
		t.Skipf("no /proc maps: %v", err)
	}
	if !strings.Contains(string(maps), filepath.Join(s.local.data(), "pg_dynshmem")) {
		t.Errorf("the postmaster maps no dynamic shared memory from %s/pg_dynshmem", s.local.data())
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
	assertClusterGone(t, s.local.dir, pm)
}

// TestCancelledStartsLeaveNoSharedMemory runs cancelled starts (cold: in
// initdb; warm: in the copy or the postmaster's start-up) in a helper in an
// IPC namespace of its own, where every System V segment is one of its
// clusters', and checks that none is left. (Without the namespace, other
// PostgreSQL servers on this machine would make the count meaningless.)
func TestCancelledStartsLeaveNoSharedMemory(t *testing.T) {
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
