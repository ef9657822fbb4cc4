package pgtemp

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/dustin/go-humanize"
)

// A full directory is the most ordinary way for a local start to fail with
// the binaries installed and working: a small TMPDIR, a tmpfs that filled
// up, a disk quota. It must be named as what it is, in the directory it is
// in, and come first: not lost in initdb's output, and never taken for
// PostgreSQL missing.

// clusterBytes is about what a local cluster takes to start: the template
// (39.9 MB measured for PostgreSQL 15) and a little WAL; 41.2 MB measured
// for a cluster that had just started.
const clusterBytes = 50_000_000

// diskFullError is a local start that failed because the directory the
// cluster goes in has no room (ENOSPC) or the user's quota there is used up
// (EDQUOT). It wraps the error of the step that failed.
type diskFullError struct {
	dir string // the parent of the cluster directory, e.g. $TMPDIR
	err error
}

func (e *diskFullError) Error() string {
	return fmt.Sprintf("no space left on device in %s (%s free; learn's PostgreSQL needs about %s there to start): free some space there, or set TMPDIR to a directory with room",
		e.dir, humanize.Bytes(freeBytes(e.dir)), humanize.Bytes(clusterBytes))
}

func (e *diskFullError) Unwrap() error { return e.err }

// noSpace reports whether err, or the output of a PostgreSQL program that
// failed, says that a file system had no room.
func noSpace(err error, output string) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		strings.Contains(output, "No space left on device") || strings.Contains(output, "Disk quota exceeded")
}

// inDir turns err into a *diskFullError for the cluster parent dir when
// it, or the output of the program that failed, says there was no room;
// otherwise it returns err as it is.
func inDir(dir string, err error, output string) error {
	if err == nil || !noSpace(err, output) {
		return err
	}
	if _, ok := errors.AsType[*diskFullError](err); ok {
		return err
	}
	return &diskFullError{dir: dir, err: err}
}
