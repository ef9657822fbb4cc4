package progress

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	homedir "github.com/learn-idempotency/learn/internal/home"
)

// FileName is the name of the progress file inside the state directory.
const FileName = "progress.json"

// ErrNewerVersion is wrapped by the error [Store.Update] returns when the
// progress file was written by a newer learn, whose schema this learn does
// not know: it leaves the file alone rather than lose what the newer one
// saved.
var ErrNewerVersion = errors.New("progress saved by a newer learn")

// Store reads and writes a learner's progress file. Several learn processes
// may use the same file at once: every change goes through [Store.Update],
// which holds an exclusive lock on Path+".lock" (gofrs/flock: flock on
// Unix, LockFileEx on Windows) while it rereads the file, applies the
// change and writes it back atomically, so no process overwrites what
// another saved.
//
// The zero Store is not usable: set Path, usually to [DefaultPath].
type Store struct {
	// Path is the progress file, e.g. ~/.local/state/learn/progress.json.
	// Its directory is created (0700) on the first write; the file is 0600.
	Path string
	// Now returns the current time, for UpdatedAt and the names of files
	// moved aside; nil means time.Now.
	Now func() time.Time
	// Notify receives the notices of [Store.Update] (a damaged file moved
	// aside, an older file upgraded); nil drops them. [Store.Load] returns
	// its notices instead.
	Notify func(notice string)
	// Known returns what a saved answer or a "next" must name to mean
	// anything: each set this learn has (its ID) mapped to the IDs of its
	// questions, in order (quiz.Known). Every reader leaves out, with a
	// notice, an answer to a question its set does not have and a "next"
	// past its end; sets it does not name are kept as they are. Nil keeps
	// everything.
	Known func() map[string][]string
}

// DefaultPath returns where learn keeps progress: $XDG_STATE_HOME/learn/progress.json
// when XDG_STATE_HOME is set to an absolute path (on every platform), else
// the platform's state directory:
//
//   - Linux and other Unix: ~/.local/state/learn/progress.json
//   - macOS: ~/Library/Application Support/learn/progress.json
//   - Windows: %LocalAppData%\learn\progress.json
//
// The error says which variable to set when there is no home directory, or
// it does not exist (learn never makes a home: home.Dir).
func DefaultPath() (string, error) {
	return defaultPath(runtime.GOOS, os.Getenv, homedir.Dir)
}

func defaultPath(goos string, getenv func(string) string, home func() (string, error)) (string, error) {
	// The XDG spec: a relative path in the variable is invalid and ignored.
	if x := getenv("XDG_STATE_HOME"); x != "" && (filepath.IsAbs(x) || strings.HasPrefix(x, "/")) {
		return filepath.Join(x, "learn", FileName), nil
	}
	if goos == "windows" {
		d := getenv("LocalAppData")
		if d == "" {
			return "", errors.New("%LocalAppData% is not set, so learn has nowhere to keep progress: set it, or XDG_STATE_HOME")
		}
		return filepath.Join(d, "learn", FileName), nil
	}
	h, err := home()
	if m, ok := errors.AsType[*homedir.Missing](err); ok {
		return "", fmt.Errorf("%v, so there is nowhere to keep progress: set HOME to a directory that exists, or XDG_STATE_HOME", m)
	}
	if err != nil || h == "" {
		return "", errors.New("there is no home directory to keep progress in: set HOME, or XDG_STATE_HOME")
	}
	if goos == "darwin" || goos == "ios" {
		return filepath.Join(h, "Library", "Application Support", "learn", FileName), nil
	}
	return filepath.Join(h, ".local", "state", "learn", FileName), nil
}

func (s *Store) known() map[string][]string {
	if s.Known == nil {
		return nil
	}
	return s.Known()
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Load returns the saved progress, with notices for the learner, and never
// leaves learn without progress to go on with:
//
//   - no file yet: empty progress, no notice;
//   - a file that cannot be parsed (truncated, garbage, not an object, no
//     usable version): it is moved aside to Path+".damaged-<UTC time>", a
//     notice says where, and the progress is empty;
//   - values that do not fit the schema (one field of the wrong type, at
//     any depth): only those are left out; a notice names them, the file
//     as it was is kept as Path+".damaged-<UTC time>", and the rest is
//     loaded and saved;
//   - a file of an older schema version: migrated to CurrentVersion and
//     saved, the original kept as Path+".v<N>", with a notice;
//   - a file of a newer version: left untouched, a notice explains, and the
//     progress is empty (and [Store.Update] refuses to write);
//   - top-level fields this learn does not know (a newer learn's, same
//     version): kept as they were and written back on every save, no notice;
//   - a file the learner made read-only: never moved, copied or rewritten;
//     what it holds is loaded as above, in memory only, and a notice says
//     that nothing is saved until it is writable.
//
// The error reports what went wrong beyond that: the file or its directory
// cannot be read or written, or something other than a regular file (a
// directory, a named pipe, a device), or a file over [MaxFileSize], is
// where the file belongs; that is left as it is. The returned progress is then empty but
// usable, so the caller may show the error and go on. Commands that only
// show the progress use [Store.Peek], which changes nothing.
func (s *Store) Load() (*Progress, []string, error) {
	if _, err := os.Lstat(s.Path); errors.Is(err, fs.ErrNotExist) && s.Path != "" {
		return NewProgress(), nil, nil // nothing saved yet: create nothing either
	}
	unlock, err := s.lock()
	if err != nil {
		return NewProgress(), nil, err
	}
	defer unlock()
	p, notices, err := s.loadLocked(true)
	if newer := (*newerError)(nil); errors.As(err, &newer) {
		return NewProgress(), append(notices, newer.notice()), nil
	}
	if err != nil {
		return NewProgress(), notices, err
	}
	return p, notices, nil
}

// Update applies fn to the newest saved progress and saves the result.
// It holds the lock for the whole read-modify-write, so fn sees what every
// other process saved before, and what fn changes is kept: fn should make
// its change (mark a page, record an answer) rather than copy a whole
// Progress loaded earlier over it.
//
// If fn returns an error, nothing is written and Update returns that error.
// Otherwise Version is set to CurrentVersion and UpdatedAt to now, and the
// file is written atomically: a temporary file in the same directory,
// fsync, rename over Path, fsync of the directory. Update returns the
// progress as saved. A damaged file is moved aside first, values that do
// not fit are left out (the file as it was is kept), both with a notice
// through Notify; a newer version's file gives an error wrapping
// [ErrNewerVersion], and a file the learner made read-only one wrapping
// [ErrReadOnly], and neither is touched.
func (s *Store) Update(fn func(*Progress) error) (*Progress, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if fi, err := os.Lstat(s.Path); err == nil {
		if ro := readOnly(s.Path, fi); ro != nil {
			return nil, ro
		}
	}
	p, notices, err := s.loadLocked(false)
	for _, n := range notices {
		if s.Notify != nil {
			s.Notify(n)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := fn(p); err != nil {
		return nil, err
	}
	p.normalize()
	p.Version = CurrentVersion
	p.UpdatedAt = s.now().UTC().Round(0)
	if err := s.save(p); err != nil {
		return nil, err
	}
	return p, nil
}

// Reset deletes the progress file, so learn starts over; asking the learner
// first is the caller's job. A missing file is not an error. Files moved
// aside earlier are kept.
func (s *Store) Reset() error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Remove(s.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return resetError(s.Path, err)
	}
	return nil
}

// resetError is the error of removing the progress file at path, in one
// line ending in what to do. EPERM and EACCES (fs.ErrPermission) come from
// a directory learn may not write, or on Linux from a file marked
// immutable or append-only (chattr +i, +a), which even its owner cannot
// remove.
func resetError(path string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("reset progress: cannot remove %s: %w; check that you may write in %s (ls -ld), and on Linux that the file is not immutable (lsattr; chattr -i to undo), then reset again",
			path, errWords(err), filepath.Dir(path))
	}
	return fmt.Errorf("reset progress: cannot remove %s: %w; remove it yourself, or set XDG_STATE_HOME to another directory", path, errWords(err))
}

// errWords is err without the *fs.PathError around it, whose op and path
// the message already says.
func errWords(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loadLocked reads the file; the caller holds the lock. It moves a damaged
// file aside; it keeps a copy of a file with values that do not fit, and
// migrates an older one; it saves what it loaded when persist is set and
// either happened (Update saves anyway). A file the learner made read-only
// is never moved, copied or saved: its notices say so. A newer version is
// an error wrapping ErrNewerVersion.
func (s *Store) loadLocked(persist bool) (*Progress, []string, error) {
	fi, err := os.Lstat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewProgress(), nil, nil
	}
	data, err := readFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewProgress(), nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	ro := readOnly(s.Path, fi)
	p, from, lost, err := decode(data, s.known())
	var dErr *damagedError
	switch {
	case errors.As(err, &dErr) && ro != nil:
		return NewProgress(), []string{notProgress(s.Path, dErr) + ". learn starts with fresh progress and leaves the file as it is.", ro.Error()}, nil
	case errors.As(err, &dErr):
		aside, merr := s.moveAside()
		if merr != nil {
			return nil, nil, fmt.Errorf("%s, and moving it aside failed: %w", notProgress(s.Path, dErr), merr)
		}
		return NewProgress(), []string{fmt.Sprintf("%s. It was moved aside, beside it, as %s, and learn starts with fresh progress.", notProgress(s.Path, dErr), filepath.Base(aside))}, nil
	case errors.Is(err, ErrNewerVersion):
		return nil, nil, &newerError{path: s.Path, version: from}
	case err != nil:
		return nil, nil, err
	}
	var notices []string
	changed := false
	if len(lost) > 0 {
		if ro != nil {
			notices = append(notices, fmt.Sprintf("Part of your saved progress does not fit and is left out: %s. The rest is loaded.", asideList(lost)))
		} else {
			kept := freeName(s.Path + ".damaged-" + s.now().UTC().Format("20060102T150405Z"))
			if err := writeFileAtomic(kept, data); err != nil {
				return nil, nil, fmt.Errorf("keep a copy of the progress file before setting aside what does not fit (%s): %w", asideList(lost), err)
			}
			notices = append(notices, fmt.Sprintf("Part of your saved progress did not fit and was set aside: %s. The rest is loaded, and the file as it was is kept beside it as %s.", asideList(lost), filepath.Base(kept)))
			changed = true
		}
	}
	if from != CurrentVersion {
		if ro != nil {
			notices = append(notices, fmt.Sprintf("Your saved progress is in an older format (version %d); learn shows it upgraded to version %d.", from, CurrentVersion))
		} else {
			backup := fmt.Sprintf("%s.v%d", s.Path, from)
			if err := writeFileAtomic(backup, data); err != nil {
				return nil, nil, fmt.Errorf("keep a copy of the version %d progress before upgrading it: %w", from, err)
			}
			notices = append(notices, fmt.Sprintf("Your saved progress was in an older format (version %d); learn upgraded it to version %d and kept the old file as %s.", from, CurrentVersion, backup))
			changed = true
		}
	}
	if ro != nil {
		notices = append(notices, ro.Error())
	}
	if persist && changed {
		p.Version = CurrentVersion
		p.UpdatedAt = s.now().UTC().Round(0)
		if err := s.save(p); err != nil {
			return nil, nil, err
		}
	}
	return p, notices, nil
}

// moveAside renames the damaged file to a free name
// Path+".damaged-<UTC time>[-N]" and returns that name.
func (s *Store) moveAside() (string, error) {
	name := freeName(s.Path + ".damaged-" + s.now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(s.Path, name); err != nil {
		return "", err
	}
	return name, nil
}

// freeName returns base, or base-2, base-3… the first that does not exist.
func freeName(base string) string {
	name := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, n)
	}
}

// save writes p to Path atomically; the caller holds the lock.
func (s *Store) save(p *Progress) error {
	data, err := encode(p)
	if err != nil {
		return err
	}
	s.removeStaleTemps()
	if err := writeFileAtomic(s.Path, data); err != nil {
		return unwritable("save progress", filepath.Dir(s.Path), err)
	}
	return nil
}

// tempPattern names the temporary files of writeFileAtomic.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".tmp-*" }

// removeStaleTemps removes temporary files left by a process that died
// while writing. Writers hold the lock, so under the lock any temporary
// file is stale; those younger than a minute are kept all the same, for
// platforms without a file lock.
func (s *Store) removeStaleTemps() {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path), tempPattern(s.Path)))
	for _, f := range old {
		if fi, err := os.Lstat(f); err == nil && time.Since(fi.ModTime()) > time.Minute {
			_ = os.Remove(f)
		}
	}
}

// lock takes the exclusive lock on Path+".lock", waiting for other
// holders, and returns its release. The lock is github.com/gofrs/flock:
// flock(2) on Unix, LockFileEx on Windows, so it holds across processes
// and across Store values in one process. It creates the directory (0700)
// and the lock file (0600, empty) if needed; the lock file is opened
// read-only and never written, and the progress file is not touched.
// Where the platform has no file locks (Plan 9, js, wasip1), saves are
// serialised within this process only.
func (s *Store) lock() (func(), error) {
	if s.Path == "" {
		return nil, errors.New("the progress store has no path; use progress.DefaultPath")
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return nil, unwritable("create the progress directory", filepath.Dir(s.Path), err)
	}
	// Opened without blocking (openNonblock), as the progress file is: a
	// named pipe in the lock file's place would otherwise block open(2)
	// for ever. Read-only, as gofrs/flock opens it, but where an exclusive
	// lock needs a file open for writing (AIX, Solaris, illumos).
	flag := os.O_CREATE | os.O_RDONLY | openNonblock
	if runtime.GOOS == "aix" || runtime.GOOS == "solaris" || runtime.GOOS == "illumos" {
		flag = os.O_CREATE | os.O_RDWR | openNonblock
	}
	l := flock.New(s.Path+".lock", flock.SetFlag(flag))
	err := l.Lock()
	if errors.Is(err, errors.ErrUnsupported) {
		processLock.Lock()
		return processLock.Unlock, nil
	}
	if err != nil {
		return nil, unwritable("lock "+l.Path(), filepath.Dir(s.Path), err)
	}
	return func() { _ = l.Unlock() }, nil
}

// unwritable is the error of a step (what) that could not write in the
// state directory dir, in one line ending in what to do: make the
// directory writable when it may not be written (read-only, another
// owner), and in any case set XDG_STATE_HOME to a directory learn may
// write (a file where a directory belongs is named; a directory that
// cannot be made, as under /proc, says so).
func unwritable(what, dir string, err error) error {
	const elsewhere = "set XDG_STATE_HOME to a directory learn may write"
	switch {
	case errors.Is(err, fs.ErrPermission) || strings.Contains(err.Error(), "read-only file system"):
		return fmt.Errorf("%s: %w; learn may not write in %s or above it: make it writable, or %s", what, err, dir, elsewhere)
	case errors.Is(err, syscall.ENOTDIR):
		if file := fileAbove(filepath.Join(dir, FileName)); file != "" {
			return fmt.Errorf("%s: %s is a file, not a directory; %s", what, file, elsewhere)
		}
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w; learn cannot make %s there: %s", what, err, dir, elsewhere)
	}
	return fmt.Errorf("%s: %w; %s", what, err, elsewhere)
}

// processLock serialises saves where there is no file lock.
var processLock sync.Mutex

// writeFileAtomic replaces path with data: a temporary file (0600) in the
// same directory, written and fsynced, renamed over path, and the directory
// fsynced so the rename survives a crash. On error path is unchanged and no
// temporary file is left.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = f.Close()
			}
			_ = os.Remove(tmp)
		}
	}()
	if err = f.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	closed = true
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}
