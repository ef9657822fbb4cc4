//go:build linux

package pgtemp

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// A cluster whose every process is stopped (SIGSTOP: a hung server, or a
// trial's kill -STOP) cannot shut down on request: Close then kills it,
// the backends too, which lead sessions of their own and so are outside the
// postmaster's process group. Nothing is left running, stopped or not.
func TestCloseKillsAStoppedClusterWhole(t *testing.T) {
	needLocal(t)
	s := startT(t, isolated(t, ""))
	conn := connect(t, s.ConnString()) // one backend of a client
	_ = conn
	pm := s.local.pm.pid()
	kids := childPIDs(pm)
	if len(kids) < 3 { // checkpointer, background writer, walwriter, the client's backend…
		t.Fatalf("the postmaster %d has %d children %v; want its workers and the client's backend", pm, len(kids), kids)
	}
	all := append([]int{pm}, kids...)
	for _, p := range all {
		if err := syscall.Kill(p, syscall.SIGSTOP); err != nil {
			t.Fatalf("stop %d: %v", p, err)
		}
	}
	t.Cleanup(func() { // whatever the test finds, nothing stays stopped
		for _, p := range all {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	s.Close()
	for _, p := range all {
		if alive(p) {
			t.Errorf("process %d of the cluster (postmaster %d) is still there after Close", p, pm)
		}
	}
	if _, err := os.Stat(s.local.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cluster's directory %s: %v; want it removed", s.local.dir, err)
	}
}

// alive reports whether pid is a process that is neither gone nor a zombie
// (a killed orphan waits for init to reap it, and runs nothing).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}
