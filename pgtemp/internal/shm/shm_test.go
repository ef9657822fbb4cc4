//go:build linux

package shm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A System V segment is removed only when it is provably the cluster's:
// owned by the cluster user and made by the postmaster learn started (or,
// without a postmaster, keyed by the data directory's inode with nothing
// attached). postmaster.pid, which the cluster user writes, naming a
// segment of root's or one some other process made removes nothing.
func TestSharedMemoryIsRemovedOnlyWhenProvablyTheClusters(t *testing.T) {
	data := t.TempDir()
	newSegment := func() (key, id int) {
		t.Helper()
		for {
			key = int(rand.Int32N(1<<30)) + 1
			id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
			if err == nil {
				t.Cleanup(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
				return key, id
			}
		}
	}
	exists := func(id int) bool { _, ok := shmStat(id); return ok }
	pidFile := func(pid, key, id int) {
		t.Helper()
		body := fmt.Sprintf("%d\n%s\n1700000000\n5432\n/tmp\n\n%9d %9d\nready\n", pid, data, key, id)
		if err := os.WriteFile(filepath.Join(data, "postmaster.pid"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	me, other := os.Geteuid(), os.Geteuid()+1
	key, id := newSegment() // made by this process, owned by learn's user

	rows := []struct {
		name         string
		uid, pmPID   int
		wantRemoved  bool
		wantSurvives bool
	}{
		{"owner is not the cluster user (root's segment named by the cluster user)", other, os.Getpid(), false, true},
		{"creator is not the cluster's postmaster", me, os.Getpid() + 1, false, true},
		{"no postmaster known", me, 0, false, true},
		{"owner is the cluster user and creator its postmaster", me, os.Getpid(), true, false},
	}
	for _, r := range rows {
		pidFile(os.Getpid(), key, id)
		removed, err := Release(data, r.uid, r.pmPID)
		if err != nil || removed != r.wantRemoved || exists(id) != r.wantSurvives {
			t.Errorf("%s: removed=%v err=%v survives=%v, want removed=%v survives=%v",
				r.name, removed, err, exists(id), r.wantRemoved, r.wantSurvives)
		}
	}

	// Without a pid file: the segment keyed by the data directory's inode,
	// when its owner is the cluster user and nothing is attached.
	os.Remove(filepath.Join(data, "postmaster.pid"))
	fi, _ := os.Stat(data)
	ino := 0
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = int(int32(st.Ino))
	}
	if ino == 0 {
		t.Skip("no inode key")
	}
	inoID, err := unix.SysvShmGet(ino, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Skipf("a segment with the inode key exists already: %v", err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(inoID, unix.IPC_RMID, nil) })
	if removed, _ := Release(data, other, 0); removed || !exists(inoID) {
		t.Errorf("a segment of another user keyed by the inode was removed")
	}
	if removed, _ := Release(data, me, 0); !removed || exists(inoID) {
		t.Errorf("the cluster user's own segment keyed by the inode was not removed")
	}
}
