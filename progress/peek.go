package progress

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The commands that only show the progress (`learn progress`, `learn
// progress export`) read it here: whatever they find, they change nothing.

// Peek returns the saved progress as Load does, with notices, but changes
// nothing: it creates no directory and no lock file, moves no damaged file
// aside, saves no upgrade and keeps no copy. Its notices say what it found
// and what learn will do about it when it next saves. Writers replace the
// file by an atomic rename, so Peek, which takes no lock, reads one whole
// version of it. It is for commands that only show the progress (`learn
// progress`); the error is one reading the file.
func (s *Store) Peek() (*Progress, []string, error) {
	fi, err := os.Lstat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewProgress(), nil, nil
	}
	data, err := readFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewProgress(), nil, nil // a symlink to nothing: nothing saved
	}
	if err != nil {
		return NewProgress(), nil, err
	}
	var notices []string
	p, from, lost, err := decode(data, s.known())
	var dErr *damagedError
	switch {
	case errors.As(err, &dErr):
		return NewProgress(), []string{notProgress(s.Path, dErr) + ". It is left as it is here; learn moves it aside (keeping it) and starts with fresh progress the next time it saves."}, nil
	case errors.Is(err, ErrNewerVersion):
		return NewProgress(), []string{(&newerError{path: s.Path, version: from}).notice()}, nil
	case err != nil:
		return NewProgress(), nil, err
	}
	if len(lost) > 0 {
		notices = append(notices, fmt.Sprintf("Part of your saved progress does not fit and is left out here: %s. The file is unchanged; learn sets these aside, keeping a copy of the file, the next time it saves.", asideList(lost)))
	}
	if from != CurrentVersion {
		notices = append(notices, fmt.Sprintf("Your saved progress is in an older format (version %d), shown upgraded to version %d; the file is unchanged until learn next saves, which keeps the old one as %s.v%d.", from, CurrentVersion, s.Path, from))
	}
	if ro := readOnly(s.Path, fi); ro != nil {
		notices = append(notices, ro.Error())
	}
	return p, notices, nil
}

// Export writes the saved progress to w as indented JSON of CurrentVersion
// (an older file is shown migrated, values that do not fit left out; a
// missing file as empty progress). A file of a newer version is copied as
// it is. Like [Store.Peek] it changes no file and creates none; a damaged
// file gives an error saying so. Peek's notices say what was left out.
func (s *Store) Export(w io.Writer) error {
	data, err := readFile(s.Path)
	var p *Progress
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p = NewProgress()
	case err != nil:
		return err
	default:
		var dErr *damagedError
		p, _, _, err = decode(data, s.known())
		switch {
		case errors.Is(err, ErrNewerVersion):
			_, err = w.Write(data)
			return err
		case errors.As(err, &dErr):
			return fmt.Errorf("%s: start learn once to move it aside, or inspect it yourself", notProgress(s.Path, dErr))
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
