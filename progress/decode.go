package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"slices"
	"strings"
)

// encode is the file format: indented JSON with a final newline.
func encode(p *Progress) ([]byte, error) {
	out, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode progress: %w", err)
	}
	return append(out, '\n'), nil
}

// damagedError is a progress file that cannot be parsed; reason says why
// in words, as the end of "… is not a progress file (reason)".
type damagedError struct{ reason error }

func (e *damagedError) Error() string { return "not a progress file (" + e.reason.Error() + ")" }

// notProgress begins every notice and error about a file that cannot be
// parsed, the app's and `learn progress`'s alike: "<path> is not a
// progress file (<why, in words>)".
func notProgress(path string, d *damagedError) string {
	return fmt.Sprintf("%s is not a progress file (%v)", path, d.reason)
}

func damaged(format string, args ...any) error {
	return &damagedError{fmt.Errorf(format, args...)}
}

// decode parses a progress file of any known version into the current
// schema, leaving out what names no question of known ([Store.Known]), and
// returns the version it was in, and the values that did not
// fit the schema and were left out (see decodeFields): one field of the
// wrong type costs that field, not the file. The error is a *damagedError
// for a file that is not a JSON object, has no usable version, or (version
// 0) has keys that version never had; or wraps ErrNewerVersion.
func decode(data []byte, known map[string][]string) (*Progress, int, []setAside, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, 0, nil, damaged("the file is empty")
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &head); err != nil || head == nil {
		return nil, 0, nil, &damagedError{errors.New(notAnObject(trimmed))}
	}
	version := 0
	if raw, ok := head["version"]; ok {
		// The version says what the rest means: without it nothing can
		// be read.
		if err := json.Unmarshal(raw, &version); err != nil {
			return nil, 0, nil, damaged("its version, %s, is not a whole number", raw)
		}
	}
	switch {
	case version < 0:
		return nil, version, nil, damaged("its version, %d, is below zero", version)
	case version > CurrentVersion:
		return nil, version, nil, ErrNewerVersion
	case version == 0:
		p, lost, err := migrateV0(head, trimmed)
		if err != nil {
			return nil, 0, nil, damaged("%v", err)
		}
		return p, 0, lost, nil
	}
	var lost []setAside
	if version == 1 {
		lost = migrateV1(head)
		trimmed, _ = json.Marshal(head) // raw values already read as JSON: no error
	}
	var p Progress
	more, _ := decodeFields(trimmed, &p) // an object: checked above
	lost = append(lost, more...)
	p.unknown = unknownFields(head, reflect.TypeFor[Progress]())
	p.normalize()
	lost = append(lost, p.dropUnknown(known)...)
	slices.SortFunc(lost, func(a, b setAside) int { return strings.Compare(a.path, b.path) })
	return &p, version, lost, nil
}

// notAnObject says in words why data, which json.Unmarshal could not read
// into an object, is not a progress file: where its JSON breaks off or
// goes wrong, or the JSON value found where an object belongs. Go's
// decoder text ("cannot unmarshal array into Go value of type …") names Go
// types, not what is in the file.
func notAnObject(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	err := dec.Decode(&v)
	var syntax *json.SyntaxError
	switch {
	case bytes.HasPrefix(data, []byte("\uFEFF")):
		return "it starts with a byte order mark (U+FEFF), which JSON does not allow: an editor saved it so"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return "it breaks off before its JSON ends"
	case errors.As(err, &syntax):
		return fmt.Sprintf("it is not JSON: something else at byte %d", syntax.Offset)
	case err != nil:
		return "it is not JSON"
	case dec.InputOffset() < int64(len(data)):
		return fmt.Sprintf("something follows its JSON, at byte %d", dec.InputOffset()+1)
	}
	switch v.(type) {
	case []any:
		return "a JSON array where an object belongs"
	case string:
		return "a JSON string where an object belongs"
	case bool:
		return "true or false where an object belongs"
	case float64:
		return "a number where an object belongs"
	case nil:
		return "null where an object belongs"
	}
	return "not a JSON object"
}

// newerError is a progress file of a version newer than CurrentVersion.
type newerError struct {
	path    string
	version int
}

func (e *newerError) Error() string {
	return fmt.Sprintf("%s was saved by a newer learn (progress version %d; this learn reads up to version %d), so this learn does not change it: upgrade learn, or run `learn progress reset` to start over",
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
