package workshop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/quiz"
)

// DefaultSummaryDir is where learn writes the room's summaries: the
// workshops directory beside the progress file, under the XDG state
// directory.
func DefaultSummaryDir() (string, error) {
	p, err := quiz.DefaultPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "workshops"), nil
}

// CheckSummaryDir makes dir (0700) if need be and checks that a file can
// be written in it, as WriteSummary will at the end: learn workshop calls
// it before anything starts, so that a directory that cannot take the
// room's summary is said at once rather than after the workshop. The
// error says which directory and to pass --summary-dir.
func CheckSummaryDir(dir string) error {
	fail := func(err error) error {
		return fmt.Errorf("cannot write the room's summary into %s: %w; pass --summary-dir with a directory you can write", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(dir, ".summary-check-*")
	if err != nil {
		return fail(err)
	}
	f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return fail(err)
	}
	return nil
}

// WriteSummary writes the room's summary as JSON into dir (made 0700 if
// need be), named after the workshop's start, and returns the file's
// path. The file is 0600 (it holds the attendees' names and progress) and
// appears whole or not at all: written to a temporary file, synced, then
// renamed.
func WriteSummary(dir string, s room.Summary) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("cannot write the room's summary into %s: %w", dir, err)
	}
	path := filepath.Join(dir, "learn-workshop-"+s.Started.Format("2006-01-02-150405")+".json")
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".summary-*")
	if err != nil {
		return "", fmt.Errorf("cannot write the room's summary into %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return "", fmt.Errorf("writing the room's summary: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("writing the room's summary: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("writing the room's summary: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("writing the room's summary: %w", err)
	}
	return path, nil
}
