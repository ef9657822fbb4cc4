package progress

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/dustin/go-humanize"
)

// MaxFileSize is the largest progress file learn reads, in bytes: 4 MiB.
// A real one is a few KB (a page, an answer or a card is a line or two), so
// anything near the cap was not written by learn; it is refused unread
// rather than held in memory whole.
const MaxFileSize = 4 << 20

// readFile reads the progress file at path, whatever is found there, without
// blocking and within [MaxFileSize]: it opens the file non-blocking (a
// named pipe opens at once instead of waiting for a writer), checks what it
// opened with fstat, and reads only a regular file (a symlink to one is
// followed) of at most MaxFileSize bytes. A directory, a pipe, a device or
// a socket in its place, or a larger file, gives an error that says what is
// there and what to do; the file is left as it is. A missing file gives an
// error wrapping fs.ErrNotExist. Every reader of the progress file (Load,
// Update, Peek, Export) goes through here.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, readError(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, readError(path, err)
	}
	if !fi.Mode().IsRegular() {
		kind := kindOf(fi.Mode())
		if target, err := os.Readlink(path); err == nil {
			kind = "a symlink to " + target + ", " + kind
		}
		return nil, fmt.Errorf("cannot read the progress file %s: it is %s, not a regular file; move it away, or set XDG_STATE_HOME to another directory", path, kind)
	}
	tooLarge := func(size int64) error {
		return fmt.Errorf("cannot read the progress file %s: it is %s bytes, more than the 4 MiB a progress file may be (learn writes a few KB), so it is left unread; move it away, or set XDG_STATE_HOME to another directory",
			path, humanize.Comma(size))
	}
	if fi.Size() > MaxFileSize {
		return nil, tooLarge(fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, readError(path, err)
	}
	if len(data) > MaxFileSize { // it grew while being read
		return nil, tooLarge(int64(len(data)))
	}
	return data, nil
}

// kindOf names, for a learner, what a file of mode m is: "a directory", "a
// named pipe (FIFO)", "a device", "a socket".
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file (mode " + m.String() + ")"
}

// readError is the error of reading the progress file at path: what
// stopped it, in words, the path once (an *fs.PathError names it too), and
// what to do.
func readError(path string, err error) error {
	err = errWords(err)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		if file := fileAbove(path); file != "" {
			return fmt.Errorf("cannot read the progress file %s: %s is a file, not a directory; set XDG_STATE_HOME to a directory learn may write", path, file)
		}
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot read the progress file %s: %w; make it readable (chmod u+r), or set XDG_STATE_HOME to another directory", path, err)
	}
	return fmt.Errorf("cannot read the progress file %s: %w; move it away, or set XDG_STATE_HOME to another directory", path, err)
}

// fileAbove returns the nearest directory above path that exists and is
// not a directory (/etc/passwd in /etc/passwd/x/learn/progress.json), ""
// for none: what "not a directory" (ENOTDIR) is about.
func fileAbove(path string) string {
	for d := filepath.Dir(path); d != filepath.Dir(d); d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			if fi.IsDir() {
				return ""
			}
			return d
		}
	}
	return ""
}
