// Package clusterdir is the directory a local cluster lives in, and what
// learn knows about it:
//
//	<dir>/                 0700, owned by the cluster user; also the socket directory
//	<dir>/data/            the data directory
//	<dir>/.s.PGSQL.5432    the Unix socket (no TCP listener)
//	<dir>/learn.owner      learn's pid and start time and the postmaster's pid
//
// [Make] creates one (in [Parent]: TMPDIR, /dev/shm or /tmp); [IsName] and
// [IsEntry] say what is learn's, [Parents] where reapers look, and
// [DiskFullError] (space.go) names a directory without room.
package clusterdir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"golang.org/x/sys/unix"
)

// Parent picks the directory a new cluster directory goes in, the
// first of:
//
//  1. TMPDIR, when it is set: a person who sets it means temporary files
//     to go there (a small /dev/shm, a disk with room, a policy);
//  2. /dev/shm, when it is a tmpfs with memDirMinFree available: the
//     cluster is thrown away and runs with fsync off, so memory is its
//     natural home, and creating its ~1000 files there takes a fraction of
//     the time it takes on a disk (Linux; macOS has no /dev/shm);
//  3. os.TempDir(), which is /tmp when TMPDIR is not set.
//
// Make then falls back to /tmp when the socket path would be too
// long or the cluster user cannot enter the directory. The template stays
// in the user cache directory either way.
func Parent() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	if memDirUsable() {
		return MemDir
	}
	return os.TempDir()
}

// memDirUsable reports whether MemDir is a tmpfs with memDirMinFree
// available to learn's user.
func memDirUsable() bool {
	var st unix.Statfs_t
	if err := unix.Statfs(MemDir, &st); err != nil {
		return false
	}
	return int64(st.Type) == tmpfsMagic && st.Bavail*uint64(st.Bsize) >= memDirMinFree
}

// Make creates a fresh 0700 directory for the cluster, owned by
// learn's user until handOver gives it to the cluster user, whose socket
// path fits in a sockaddr_un. It uses parent (Parent() when empty)
// unless that path is too long or the cluster user cannot reach it. When
// the parent was chosen automatically and a directory cannot be made there
// (a TMPDIR that is read-only or not a directory, a full /dev/shm), it
// tries the next of os.TempDir() and /tmp, so that learn runs wherever one
// of them works; the error names the first place tried.
func Make(parent string, run runas.Runner) (string, error) {
	auto := parent == ""
	if auto {
		parent = Parent()
	}
	// "learn-" and up to 10 random digits from MkdirTemp, then "/" + socket.
	fits := func(p string) bool { return len(p)+len("/learn-0123456789/")+len(SocketName) <= MaxSocketPath }
	if !fits(parent) || !run.CanReach(parent) {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "learn-")
	if err != nil && auto {
		for _, next := range []string{os.TempDir(), "/tmp"} {
			if next == parent || !fits(next) || !run.CanReach(next) {
				continue
			}
			if d, e := os.MkdirTemp(next, "learn-"); e == nil {
				dir, err = d, nil
				break
			}
		}
	}
	if NoSpace(err, "") {
		return "", &DiskFullError{Dir: parent, Err: err}
	}
	if err != nil {
		return "", fmt.Errorf("could not create a directory for the PostgreSQL cluster in %s: %w; set TMPDIR to a writable directory", parent, err)
	}
	if len(filepath.Join(dir, SocketName)) > MaxSocketPath {
		os.Remove(dir)
		return "", fmt.Errorf("the PostgreSQL socket path in %s would be too long for Unix sockets; set TMPDIR to a short directory such as /tmp", dir)
	}
	return dir, nil
}

const (
	// MaxSocketPath is the longest Unix socket path (sun_path holds 108
	// bytes with its terminating NUL on Linux; 104 on macOS, where TMPDIR
	// is long, hence the fall back to /tmp).
	MaxSocketPath = 103
	// SocketName is the cluster's Unix socket in its directory.
	SocketName = ".s.PGSQL.5432"

	// MemDir is where a cluster goes when it is a memory file system with
	// room (see Parent).
	MemDir = "/dev/shm"
	// memDirMinFree is the room MemDir must have: the template is ~40 MB,
	// and max_wal_size bounds the WAL.
	memDirMinFree = 256 << 20
	tmpfsMagic    = 0x01021994 // statfs f_type of tmpfs (linux/magic.h)
)

// Parents lists the directories clusters are made in: extra (a test's
// parent) when not empty, os.TempDir(), /tmp and the memory directory.
func Parents(extra string) []string {
	var out []string
	for _, p := range []string{extra, os.TempDir(), "/tmp", MemDir} {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// IsName reports whether name is one os.MkdirTemp(…, "learn-") gives:
// "learn-" and decimal digits. Other learn-* names (a checkout called
// learn-idempotency, say) are never looked at.
func IsName(name string) bool {
	digits, ok := strings.CutPrefix(name, "learn-")
	if !ok || digits == "" {
		return false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// IsEntry reports whether name is one learn puts in a cluster directory.
func IsEntry(name string) bool {
	switch {
	case name == "data", name == SocketName, name == SocketName+".lock",
		name == owner.File, strings.HasPrefix(name, owner.File+".tmp-"):
		return true
	}
	return false
}

// RemoveAll is os.RemoveAll retried briefly, for files a dying process was
// still creating.
func RemoveAll(dir string) error {
	var err error
	for i := 0; i < 5; i++ {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}
