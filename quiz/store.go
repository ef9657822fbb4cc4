package quiz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
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
}

// DefaultPath returns where learn keeps progress: $XDG_STATE_HOME/learn/progress.json
// when XDG_STATE_HOME is set to an absolute path (on every platform), else
// the platform's state directory:
//
//   - Linux and other Unix: ~/.local/state/learn/progress.json
//   - macOS: ~/Library/Application Support/learn/progress.json
//   - Windows: %LocalAppData%\learn\progress.json
//
// The error says which variable to set when there is no home directory.
func DefaultPath() (string, error) {
	return defaultPath(runtime.GOOS, os.Getenv, os.UserHomeDir)
}

func defaultPath(goos string, getenv func(string) string, home func() (string, error)) (string, error) {
	// The XDG spec: a relative path in the variable is invalid and ignored.
	if x := getenv("XDG_STATE_HOME"); x != "" && (filepath.IsAbs(x) || strings.HasPrefix(x, "/")) {
		return filepath.Join(x, "learn", FileName), nil
	}
	if goos == "windows" {
		d := getenv("LocalAppData")
		if d == "" {
			return "", errors.New("quiz: %LocalAppData% is not set, so learn has nowhere to keep progress; set it or XDG_STATE_HOME")
		}
		return filepath.Join(d, "learn", FileName), nil
	}
	h, err := home()
	if err != nil || h == "" {
		return "", fmt.Errorf("quiz: no home directory to keep progress in (%v); set HOME or XDG_STATE_HOME", err)
	}
	if goos == "darwin" || goos == "ios" {
		return filepath.Join(h, "Library", "Application Support", "learn", FileName), nil
	}
	return filepath.Join(h, ".local", "state", "learn", FileName), nil
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
//   - a file that cannot be parsed (truncated, garbage, wrong types): it is
//     moved aside to Path+".damaged-<UTC time>", a notice says where, and
//     the progress is empty;
//   - a file of an older schema version: migrated to CurrentVersion and
//     saved, the original kept as Path+".v<N>", with a notice;
//   - a file of a newer version: left untouched, a notice explains, and the
//     progress is empty (and [Store.Update] refuses to write).
//
// The error reports what went wrong beyond that (the file or its directory
// cannot be read or written); the returned progress is then empty but
// usable, so the caller may show the error and go on.
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
// progress as saved. A damaged file is moved aside first (notice through
// Notify); a newer version's file gives an error wrapping [ErrNewerVersion].
func (s *Store) Update(fn func(*Progress) error) (*Progress, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
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
		return fmt.Errorf("quiz: reset progress: %w", err)
	}
	return nil
}

// Export writes the saved progress to w as indented JSON of CurrentVersion
// (an older file is shown migrated; a missing file as empty progress). A
// file of a newer version is copied as it is. It changes no file; a damaged
// file gives an error saying so.
func (s *Store) Export(w io.Writer) error {
	data, err := os.ReadFile(s.Path)
	var p *Progress
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p = NewProgress()
	case err != nil:
		return fmt.Errorf("quiz: export progress: %w", err)
	default:
		var dErr *damagedError
		p, _, err = decode(data)
		switch {
		case errors.Is(err, ErrNewerVersion):
			_, err = w.Write(data)
			return err
		case errors.As(err, &dErr):
			return fmt.Errorf("quiz: %s cannot be read (%v); start learn once to move it aside, or inspect it yourself", s.Path, dErr.reason)
		case err != nil:
			return err
		}
	}
	out, err := encode(p)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// loadLocked reads the file; the caller holds the lock. It moves a damaged
// file aside; it migrates an older one, and saves the migration when
// persist is set (Update saves anyway). A newer version is an error
// wrapping ErrNewerVersion.
func (s *Store) loadLocked(persist bool) (*Progress, []string, error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewProgress(), nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("quiz: read progress: %w", err)
	}
	p, from, err := decode(data)
	var dErr *damagedError
	switch {
	case errors.As(err, &dErr):
		aside, merr := s.moveAside()
		if merr != nil {
			return nil, nil, fmt.Errorf("quiz: %s cannot be read (%v), and moving it aside failed: %w", s.Path, dErr.reason, merr)
		}
		return NewProgress(), []string{fmt.Sprintf("Your saved progress could not be read (%v). It was moved to %s, and learn starts with fresh progress.", dErr.reason, aside)}, nil
	case errors.Is(err, ErrNewerVersion):
		return nil, nil, &newerError{path: s.Path, version: from}
	case err != nil:
		return nil, nil, err
	}
	if from == CurrentVersion {
		return p, nil, nil
	}
	backup := fmt.Sprintf("%s.v%d", s.Path, from)
	if err := writeFileAtomic(backup, data); err != nil {
		return nil, nil, fmt.Errorf("quiz: keep a copy of the version %d progress before upgrading it: %w", from, err)
	}
	notice := fmt.Sprintf("Your saved progress was in an older format (version %d); learn upgraded it to version %d and kept the old file as %s.", from, CurrentVersion, backup)
	if persist {
		p.UpdatedAt = s.now().UTC().Round(0)
		if err := s.save(p); err != nil {
			return nil, nil, err
		}
	}
	return p, []string{notice}, nil
}

// moveAside renames the damaged file to a free name
// Path+".damaged-<UTC time>[-N]" and returns that name.
func (s *Store) moveAside() (string, error) {
	base := s.Path + ".damaged-" + s.now().UTC().Format("20060102T150405Z")
	name := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s-%d", base, n)
	}
	if err := os.Rename(s.Path, name); err != nil {
		return "", err
	}
	return name, nil
}

// save writes p to Path atomically; the caller holds the lock.
func (s *Store) save(p *Progress) error {
	data, err := encode(p)
	if err != nil {
		return err
	}
	s.removeStaleTemps()
	if err := writeFileAtomic(s.Path, data); err != nil {
		return fmt.Errorf("quiz: save progress: %w", err)
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
		return nil, errors.New("quiz: the progress store has no path; use quiz.DefaultPath")
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return nil, fmt.Errorf("quiz: create the progress directory: %w", err)
	}
	l := flock.New(s.Path + ".lock")
	err := l.Lock()
	if errors.Is(err, errors.ErrUnsupported) {
		processLock.Lock()
		return processLock.Unlock, nil
	}
	if err != nil {
		return nil, fmt.Errorf("quiz: lock %s: %w", l.Path(), err)
	}
	return func() { _ = l.Unlock() }, nil
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

// encode is the file format: indented JSON with a final newline.
func encode(p *Progress) ([]byte, error) {
	out, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("quiz: encode progress: %w", err)
	}
	return append(out, '\n'), nil
}

// damagedError is a progress file that cannot be parsed.
type damagedError struct{ reason error }

func (e *damagedError) Error() string { return "damaged progress file: " + e.reason.Error() }

func damaged(format string, args ...any) error {
	return &damagedError{fmt.Errorf(format, args...)}
}

// decode parses a progress file of any known version into the current
// schema and returns the version it was in. The error is a *damagedError
// for a file that cannot be parsed, or wraps ErrNewerVersion.
func decode(data []byte) (*Progress, int, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, 0, damaged("the file is empty")
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &head); err != nil || head == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return nil, 0, damaged("%v", err)
	}
	version := 0
	if raw, ok := head["version"]; ok {
		if err := json.Unmarshal(raw, &version); err != nil {
			return nil, 0, damaged("version is not a whole number: %s", raw)
		}
	}
	switch {
	case version < 0:
		return nil, version, damaged("version %d is negative", version)
	case version > CurrentVersion:
		return nil, version, ErrNewerVersion
	case version == 0:
		p, err := migrateV0(trimmed)
		if err != nil {
			return nil, 0, damaged("%v", err)
		}
		return p, 0, nil
	}
	var p Progress
	if err := json.Unmarshal(trimmed, &p); err != nil {
		return nil, version, damaged("%v", err)
	}
	p.normalize()
	return &p, version, nil
}

// newerError is a progress file of a version newer than CurrentVersion.
type newerError struct {
	path    string
	version int
}

func (e *newerError) Error() string {
	return fmt.Sprintf("quiz: %s was saved by a newer learn (progress version %d; this learn reads up to version %d), so this learn does not change it: upgrade learn, or run `learn progress reset` to start over",
		e.path, e.version, CurrentVersion)
}

func (e *newerError) Is(target error) bool { return target == ErrNewerVersion }

func (e *newerError) notice() string {
	return fmt.Sprintf("Your progress in %s was saved by a newer learn (version %d; this learn reads up to version %d). It is left untouched and nothing is saved this time: upgrade learn, or run `learn progress reset` to start over.",
		e.path, e.version, CurrentVersion)
}
