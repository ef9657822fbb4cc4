package clusterdir

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dustin/go-humanize"
)

// A full directory is the most ordinary way for a local start to fail with
// the binaries installed and working: a small TMPDIR, a tmpfs that filled
// up, a disk quota. It must be named as what it is, in the directory it is
// in, and come first: not lost in initdb's output, and never taken for
// PostgreSQL missing.

// ClusterBytes is about what a local cluster takes to start: the template
// (39.9 MB measured for PostgreSQL 15) and a little WAL; 41.2 MB measured
// for a cluster that had just started.
const ClusterBytes = 50_000_000

// DiskFullError is a local start that failed because the directory the
// cluster goes in has no room (ENOSPC) or the user's quota there is used up
// (EDQUOT). It wraps the error of the step that failed.
type DiskFullError struct {
	Dir string // the parent of the cluster directory, e.g. $TMPDIR
	Err error
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("no space left on device in %s (%s free; learn's PostgreSQL needs about %s there to start): free some space there, or set TMPDIR to a directory with room",
		e.Dir, humanize.Bytes(FreeBytes(e.Dir)), humanize.Bytes(ClusterBytes))
}

func (e *DiskFullError) Unwrap() error { return e.Err }

// NoSpace reports whether err, or the output of a PostgreSQL program that
// failed, says that a file system had no room.
func NoSpace(err error, output string) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		strings.Contains(output, "No space left on device") || strings.Contains(output, "Disk quota exceeded")
}

// InDir turns err into a *DiskFullError for the cluster parent dir when
// it, or the output of the program that failed, says there was no room;
// otherwise it returns err as it is.
func InDir(dir string, err error, output string) error {
	if err == nil || !NoSpace(err, output) {
		return err
	}
	if _, ok := errors.AsType[*DiskFullError](err); ok {
		return err
	}
	return &DiskFullError{Dir: dir, Err: err}
}

// FreeBytes is the room learn's user has on the file system of path, or of
// its nearest existing parent.
func FreeBytes(path string) uint64 {
	for d := filepath.Clean(path); ; d = filepath.Dir(d) {
		var st unix.Statfs_t
		if unix.Statfs(d, &st) == nil {
			return st.Bavail * uint64(st.Bsize)
		}
		if d == filepath.Dir(d) {
			return 0
		}
	}
}
