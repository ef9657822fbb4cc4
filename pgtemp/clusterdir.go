package pgtemp

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// clusterParent picks the directory a new cluster directory goes in, the
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
// makeClusterDir then falls back to /tmp when the socket path would be too
// long or the cluster user cannot enter the directory. The template stays
// in the user cache directory either way.
func clusterParent() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	if memDirUsable() {
		return memDir
	}
	return os.TempDir()
}

// memDirUsable reports whether memDir is a tmpfs with memDirMinFree
// available to learn's user.
func memDirUsable() bool {
	var st unix.Statfs_t
	if err := unix.Statfs(memDir, &st); err != nil {
		return false
	}
	return int64(st.Type) == tmpfsMagic && st.Bavail*uint64(st.Bsize) >= memDirMinFree
}

// makeClusterDir creates a fresh 0700 directory for the cluster, owned by
// learn's user until handOver gives it to the cluster user, whose socket
// path fits in a sockaddr_un. It uses parent (clusterParent() when empty)
// unless that path is too long or the cluster user cannot reach it. When
// the parent was chosen automatically and a directory cannot be made there
// (a TMPDIR that is read-only or not a directory, a full /dev/shm), it
// tries the next of os.TempDir() and /tmp, so that learn runs wherever one
// of them works; the error names the first place tried.
func makeClusterDir(parent string, run runner) (string, error) {
	auto := parent == ""
	if auto {
		parent = clusterParent()
	}
	// "learn-" and up to 10 random digits from MkdirTemp, then "/" + socket.
	fits := func(p string) bool { return len(p)+len("/learn-0123456789/")+len(socketName) <= maxSocketPath }
	if !fits(parent) || !run.canReach(parent) {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "learn-")
	if err != nil && auto {
		for _, next := range []string{os.TempDir(), "/tmp"} {
			if next == parent || !fits(next) || !run.canReach(next) {
				continue
			}
			if d, e := os.MkdirTemp(next, "learn-"); e == nil {
				dir, err = d, nil
				break
			}
		}
	}
	if noSpace(err, "") {
		return "", &diskFullError{dir: parent, err: err}
	}
	if err != nil {
		return "", fmt.Errorf("could not create a directory for the PostgreSQL cluster in %s: %w; set TMPDIR to a writable directory", parent, err)
	}
	if len(filepath.Join(dir, socketName)) > maxSocketPath {
		os.Remove(dir)
		return "", fmt.Errorf("the PostgreSQL socket path in %s would be too long for Unix sockets; set TMPDIR to a short directory such as /tmp", dir)
	}
	return dir, nil
}
