// Package template keeps the cluster templates in learn's cache directory
// and copies them: a template is the data directory of a freshly initdb'd
// cluster, so that only the first start of a PostgreSQL major version (for
// one cluster user) pays for initdb.
//
//   - [CacheRoot] is learn's directory in the user cache directory; [Path]
//     a template's place in it.
//   - [Save] makes a template whole or not at all (a copy renamed into
//     place under a shared lock); [ReapCopies] removes the copies of learn
//     processes killed while saving one.
//   - [CopyTree] copies a tree through an os.Root, never following a link
//     out of it: the template into a new cluster, a cluster into a template,
//     downloaded binaries into a cluster directory.
//   - [SaveError] and [DirProblem] say in words why a template cannot be
//     saved.
package template

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
	"golang.org/x/sys/unix"

	"github.com/learn-idempotency/learn/internal/home"
	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
)

// A cluster template is the data directory of a freshly initdb'd cluster,
// kept under the user cache directory as
//
//	<cache>/learn/pg-template-<major>-<uid of the cluster user>
//
// Copying it takes a fraction of initdb's time, so only the first run pays
// for initdb. A template is only ever created whole: it is copied into a
// sibling directory and renamed into place, so a reader sees either nothing
// or a complete template, and two learn processes racing to create it both
// succeed (the loser discards its copy).

// CacheRoot returns learn's directory in the user cache directory (or in
// cacheDir when set), or "" when there is none: none is derived from a
// home directory that does not exist (home.CacheDir), which learn never
// makes.
func CacheRoot(cacheDir string) string {
	if cacheDir == "" {
		d, err := home.CacheDir()
		if err != nil {
			return ""
		}
		cacheDir = d
	}
	return filepath.Join(cacheDir, "learn")
}

// Path returns where the template for this major version and cluster
// user lives, or "" when there is no user cache directory.
func Path(cacheDir, major string, uid int) string {
	root := CacheRoot(cacheDir)
	if root == "" {
		return ""
	}
	return filepath.Join(root, fmt.Sprintf("pg-template-%s-%d", major, uid))
}

// ErrNoCacheDir is why no template is saved where there is no user cache
// directory.
var ErrNoCacheDir = errors.New("there is no user cache directory to keep a cluster template in (set XDG_CACHE_HOME, or HOME to a directory that exists)")

// Bytes is about what a template of PostgreSQL 15 takes (39.9 MB
// measured), for the messages that say how much room it needs.
const Bytes = 40_000_000

// SaveError turns why a template could not be saved in dir
// (learn's directory in the user cache directory) into words for people:
// what is wrong with the directory, not which system call failed. The
// error wraps err.
func SaveError(dir string, err error) error {
	var why string
	switch f := FileInTheWay(dir); {
	case f != "" && (errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EEXIST)):
		why = fmt.Sprintf("%s is a file, not a directory", f)
	case errors.Is(err, syscall.EROFS):
		why = fmt.Sprintf("%s is on a read-only file system", dir)
	case errors.Is(err, fs.ErrPermission):
		why = fmt.Sprintf("learn may not write in %s", dir)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		why = fmt.Sprintf("no space left on device in %s (%s free; a template takes about %s)",
			dir, humanize.Bytes(clusterdir.FreeBytes(dir)), humanize.Bytes(Bytes))
	default:
		why = fmt.Sprintf("could not write it in %s: %v", dir, err)
	}
	return &reasonError{why, err}
}

// reasonError is an error told in words of its own, wrapping its cause.
type reasonError struct {
	why string
	err error
}

func (e *reasonError) Error() string { return e.why }
func (e *reasonError) Unwrap() error { return e.err }

// FileInTheWay returns the first path from dir up that exists and is not a
// directory, or "".
func FileInTheWay(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			if !fi.IsDir() {
				return d
			}
			return ""
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// DirProblem says why a template could not be saved in learn's
// cache directory root right now ("" when nothing is known to stop it),
// without writing there: a file in the way, a read-only file system, a
// directory learn may not write, or too little room.
func DirProblem(root string) string {
	if f := FileInTheWay(root); f != "" {
		return fmt.Sprintf("%s is a file, not a directory", f)
	}
	d := root
	for {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		d = filepath.Dir(d)
	}
	switch err := unix.Access(d, unix.W_OK); {
	case errors.Is(err, syscall.EROFS):
		return fmt.Sprintf("%s is on a read-only file system", d)
	case err != nil:
		return fmt.Sprintf("learn may not write in %s", d)
	}
	if free := clusterdir.FreeBytes(d); free < Bytes {
		return fmt.Sprintf("no space left on device in %s (%s free; a template takes about %s)", d, humanize.Bytes(free), humanize.Bytes(Bytes))
	}
	return ""
}

// Usable reports whether dir looks like a complete cluster of the
// given major version. Whether it really starts is found out by starting it.
func Usable(dir, major string) bool {
	v, err := os.ReadFile(filepath.Join(dir, "PG_VERSION"))
	if err != nil || strings.TrimSpace(string(v)) != major {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "global", "pg_control"))
	return err == nil
}

// Save copies the data directory of a cluster that has never been
// started (straight from initdb), opened as data, to tmpl, replacing a
// broken template when replace is true. data belongs to the cluster user:
// it is read only through the handle, so no link planted in it leads the
// copy out of it (see CopyTree). Losing a race to another learn process is
// not an error. When ctx ends it leaves no partial copy behind; when the
// process is killed outright, the next run removes the copy
// (ReapCopies).
func Save(ctx context.Context, data *os.Root, tmpl string, replace bool) error {
	tmp, release, err := NewCopy(tmpl)
	if err != nil {
		return err
	}
	defer release()
	if err := CopyTree(ctx, data, tmp, nil); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if replace {
		discard(tmpl)
	}
	err = os.Rename(tmp, tmpl)
	if err != nil {
		os.RemoveAll(tmp)
	}
	if errors.Is(err, fs.ErrExist) {
		// Another learn process got there first (EEXIST or ENOTEMPTY); its
		// template comes from a fresh initdb just as ours does.
		return nil
	}
	return err
}

// NewCopy makes the directory a new copy of the template tmpl is
// made in, <tmpl>.tmp-<random>, after removing the copies of killed learn
// processes, and holds the templates' lock shared until release, so that
// no other learn removes the copy meanwhile (see LockFile).
func NewCopy(tmpl string) (tmp string, release func(), err error) {
	parent := filepath.Dir(tmpl)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", nil, err
	}
	ReapCopies(parent, nil)
	release, err = Lock(parent, unix.LOCK_SH)
	if err != nil {
		return "", nil, err
	}
	tmp, err = os.MkdirTemp(parent, filepath.Base(tmpl)+".tmp-")
	if err != nil {
		release()
		return "", nil, err
	}
	return tmp, release, nil
}

// discard moves a template out of the way and deletes it. Renaming
// first means no reader ever sees a half-deleted template. The caller holds
// the templates' lock (Lock).
func discard(tmpl string) {
	old := fmt.Sprintf("%s.old-%d-%d", tmpl, os.Getpid(), time.Now().UnixNano())
	if os.Rename(tmpl, old) == nil {
		os.RemoveAll(old)
	}
}

// LockFile is the lock file in learn's cache directory that proves
// whether a template save is under way. Every save holds it shared
// (flock LOCK_SH) from before it creates its copy <template>.tmp-<random>
// until that copy is renamed into place or removed, and while it discards
// a broken template (<template>.old-…). The kernel releases a flock with
// the last descriptor of the process that holds it, kill -9 included, and
// over NFS the lock is the server's, seen from every host. So whoever gets
// it exclusively knows that no save is running anywhere, and that every
// copy in the directory was left by a learn that is gone.
const LockFile = "pg-template.lock"

// Lock takes the templates' lock in dir (created 0600 if needed)
// with how (unix.LOCK_SH or LOCK_EX, with LOCK_NB not to wait), and returns
// its release. Keep release reachable (defer it) for as long as the lock
// must hold: the lock lives in the file, which a finalizer would close.
func Lock(dir string, how int) (release func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// RemovedCopy is an interrupted template copy that was removed.
type RemovedCopy struct {
	Dir   string
	Bytes int64 // what it held
}

func (rc RemovedCopy) String() string {
	return fmt.Sprintf("removed an interrupted copy of the cluster template, %s (%s), left by a learn that was killed while saving it",
		rc.Dir, humanize.Bytes(uint64(rc.Bytes)))
}

// ReapCopies removes from learn's cache directory root the
// template copies (<template>.tmp-*) and discarded templates
// (<template>.old-*) of learn processes killed while they saved a
// template, 5 to 40 MB each; only when it gets the templates' lock
// exclusively, which proves that no save is under way (see LockFile),
// and only what this user owns. Without anything to remove it creates
// nothing. logf, when not nil, gets one line per copy removed. The error
// joins the copies that could not be removed.
func ReapCopies(root string, logf func(format string, args ...any)) ([]RemovedCopy, error) {
	if root == "" || len(copies(root)) == 0 {
		return nil, nil
	}
	release, err := Lock(root, unix.LOCK_EX|unix.LOCK_NB)
	if err != nil {
		// EWOULDBLOCK: a save is under way, and its copy must stay; the
		// others go with the next run. Any other error (a read-only
		// directory, a file system without locks) proves nothing.
		return nil, nil
	}
	defer release()
	var removed []RemovedCopy
	var errs []error
	for _, dir := range copies(root) {
		fi, err := os.Lstat(dir)
		if err != nil {
			continue
		}
		if uid, ok := owner.FileUID(fi); !ok || uid != os.Geteuid() {
			continue
		}
		size := TreeSize(dir)
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("could not remove the interrupted template copy %s: %w; remove it by hand", dir, err))
			continue
		}
		rc := RemovedCopy{Dir: dir, Bytes: size}
		removed = append(removed, rc)
		if logf != nil {
			logf("%s", rc)
		}
	}
	return removed, errors.Join(errs...)
}

// copies lists the template copies and discarded templates in root.
func copies(root string) []string {
	var out []string
	for _, pattern := range []string{"pg-template-*.tmp-*", "pg-template-*.old-*"} {
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		out = append(out, m...)
	}
	return out
}
