package quiz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

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
// schema and returns the version it was in, and the values that did not
// fit the schema and were left out (see decodeFields): one field of the
// wrong type costs that field, not the file. The error is a *damagedError
// for a file that is not a JSON object, has no usable version, or (version
// 0) has keys that version never had; or wraps ErrNewerVersion.
func decode(data []byte) (*Progress, int, []setAside, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, 0, nil, damaged("the file is empty")
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &head); err != nil || head == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return nil, 0, nil, damaged("%v", err)
	}
	version := 0
	if raw, ok := head["version"]; ok {
		// The version says what the rest means: without it nothing can
		// be read.
		if err := json.Unmarshal(raw, &version); err != nil {
			return nil, 0, nil, damaged("version is not a whole number: %s", raw)
		}
	}
	switch {
	case version < 0:
		return nil, version, nil, damaged("version %d is negative", version)
	case version > CurrentVersion:
		return nil, version, nil, ErrNewerVersion
	case version == 0:
		p, lost, err := migrateV0(head, trimmed)
		if err != nil {
			return nil, 0, nil, damaged("%v", err)
		}
		return p, 0, lost, nil
	}
	var p Progress
	lost, _ := decodeFields(trimmed, &p) // an object: checked above
	p.normalize()
	return &p, version, lost, nil
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

// ErrReadOnly is wrapped by the error [Store.Update] returns when the
// progress file is read-only (its owner may not write it, e.g. chmod 0400):
// the learner made it so, and learn leaves it as it is rather than replace
// it with a writable one.
var ErrReadOnly = errors.New("progress file is read-only")

// readOnlyError is a progress file its owner may not write. Its message is
// also Load's notice, word for word, so that a screen that shows both
// shows it once.
type readOnlyError struct {
	path string
	mode fs.FileMode
}

func (e *readOnlyError) Error() string {
	return fmt.Sprintf("Your progress file %s is read-only (mode %04o), so learn leaves it as it is and saves nothing: to save your progress again, make it writable (chmod u+w %s).",
		e.path, e.mode.Perm(), e.path)
}

func (e *readOnlyError) Is(target error) bool { return target == ErrReadOnly }

// readOnly returns a *readOnlyError when fi, the progress file's, may not
// be written by its owner; else nil.
func readOnly(path string, fi fs.FileInfo) error {
	if fi != nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o200 == 0 {
		return &readOnlyError{path: path, mode: fi.Mode()}
	}
	return nil
}
