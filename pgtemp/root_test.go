//go:build linux

package pgtemp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// asRootWithClusterUser skips unless learn's tests run as root with a user
// to run the cluster as, and returns that runner.
func asRootWithClusterUser(t *testing.T) runner {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the hand-over to the cluster user only happens as root")
	}
	run, err := currentRunner()
	if err != nil {
		t.Skip(err)
	}
	return run
}

// The cluster user owns the cluster directory after the hand-over and may
// rename it and put links anywhere in it. Whatever it plants, learn as root
// writes its owner file, removes the data directory and reads the data
// directory for the template only inside the directory it made: a victim
// directory of root's the links point at stays untouched, and no byte of a
// root-only file reaches the template.
func TestRootNeverFollowsLinksPlantedInTheClusterDir(t *testing.T) {
	run := asRootWithClusterUser(t)
	parent, err := os.MkdirTemp("", "pgtemp-links-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(parent, 0o755)
	t.Cleanup(func() { os.RemoveAll(parent) })
	victim := t.TempDir() // root's, 0700
	secret := filepath.Join(victim, "secret")
	os.WriteFile(secret, []byte("root-only secret"), 0o600)
	os.Mkdir(filepath.Join(victim, "data"), 0o700)
	os.WriteFile(filepath.Join(victim, "data", "keep"), []byte("keep"), 0o600)

	dir, err := makeClusterDir(parent, run)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{dir: dir, run: run}
	if c.root, err = os.OpenRoot(dir); err != nil {
		t.Fatal(err)
	}
	defer c.root.Close()
	os.MkdirAll(filepath.Join(dir, "data", "global"), 0o700)
	os.WriteFile(filepath.Join(dir, "data", "PG_VERSION"), []byte("15\n"), 0o600)
	if err := c.handOver(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(dir); fi == nil || fileOwner(fi) != run.uid {
		t.Fatalf("%s was not handed over to %s", dir, run)
	}

	// What the cluster user may do to its own directory: a file swapped
	// for a link to root's secret, and the whole directory moved away and
	// replaced by a link to root's victim directory.
	pgVersion := filepath.Join(dir, "data", "PG_VERSION")
	os.Remove(pgVersion)
	os.Symlink(secret, pgVersion)
	os.Symlink(victim, filepath.Join(dir, "data", "global", "escape"))
	tmpl := filepath.Join(t.TempDir(), "tmpl")
	data, err := c.root.OpenRoot("data")
	if err != nil {
		t.Fatal(err)
	}
	err = saveTemplate(context.Background(), data, tmpl, false)
	data.Close()
	t.Logf("saveTemplate: %v", err)
	filepath.WalkDir(tmpl, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if raw, _ := os.ReadFile(path); strings.Contains(string(raw), "secret") {
				t.Errorf("root copied the secret into the template as %s", path)
			}
		}
		return nil
	})

	moved := dir + "-moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(moved) })
	if err := os.Symlink(victim, dir); err != nil {
		t.Fatal(err)
	}

	if err := writeOwnerIn(c.root, 4242); err != nil {
		t.Errorf("writeOwnerIn: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(victim, ownerFile)); err == nil {
		t.Errorf("root wrote its owner file into %s, where the link led", victim)
	}
	if raw, err := os.ReadFile(filepath.Join(moved, ownerFile)); err != nil || !strings.Contains(string(raw), "postmaster_pid=4242") {
		t.Errorf("the owner file did not land in the directory learn made: %q, %v", raw, err)
	}

	if err := c.root.RemoveAll("data"); err != nil {
		t.Errorf("RemoveAll(data): %v", err)
	}
	if _, err := os.Stat(filepath.Join(victim, "data", "keep")); err != nil {
		t.Errorf("root removed the victim's data through the link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(moved, "data")); err == nil {
		t.Errorf("the cluster's own data directory was not removed")
	}
	if err := removeAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("removing the cluster directory removed what its link pointed at: %v", err)
	}
}

func fileOwner(fi os.FileInfo) int {
	uid, _ := fileUID(fi)
	return uid
}

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
		removed, err := releaseSharedMemory(data, r.uid, r.pmPID)
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
	if removed, _ := releaseSharedMemory(data, other, 0); removed || !exists(inoID) {
		t.Errorf("a segment of another user keyed by the inode was removed")
	}
	if removed, _ := releaseSharedMemory(data, me, 0); !removed || exists(inoID) {
		t.Errorf("the cluster user's own segment keyed by the inode was not removed")
	}
}
