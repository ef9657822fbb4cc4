package ttyin

import (
	"io"
	"os"
	"sync/atomic"
	"time"
)

// Reader is an input read through a Guard.
type Reader struct {
	r       io.Reader
	g       *Guard
	buf     []byte
	out     []byte
	pending []byte // filtered, not yet returned: only for a tiny p
}

// readSize is how much Read reads for a buffer of size bytes. Guard adds
// at most one byte for each it lets through (an end marker and a Ctrl-C
// for a paste marker and a Ctrl-C, at least six bytes), and once a read at
// most 22 more (a paste ended after a pause, by its size, by a Ctrl-C at
// the read's first byte; a string ended; an ESC held back): what it lets
// through of readSize(size) bytes fits in size.
func readSize(size int) int { return max(1, (size-22)/2) }

// NewReader returns r read through a Guard that tells the time with now
// (time.Now when nil).
func NewReader(r io.Reader, now func() time.Time) *Reader {
	return &Reader{r: r, g: NewGuard(now)}
}

// Read reads once from the input and returns what the Guard lets through
// of it. It never holds bytes back for a later Read (a reader that waits
// for the terminal to be readable before it calls Read would not see
// them): it reads at most readSize(len(p)) bytes, whose filtered bytes fit
// in p. It may return 0 bytes and no error, when the Guard dropped all it
// read.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(r.pending) > 0 { // only for a p shorter than readSize's slack
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	n := readSize(len(p))
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	m, err := r.r.Read(r.buf[:n])
	if m == 0 {
		return 0, err
	}
	r.out = r.g.Filter(r.out[:0], r.buf[:m])
	k := copy(p, r.out)
	r.pending = append(r.pending[:0], r.out[k:]...)
	return k, err
}

// File is a terminal's *os.File read through a Guard. Everything but Read
// is the file's own, so Bubble Tea still sees a terminal: it puts it in
// raw mode, reads its size, and cancels a read by waiting on its
// descriptor before it calls Read.
type File struct {
	*os.File
	r        *Reader
	detached atomic.Bool
}

// NewFile returns f read through a Guard (time from time.Now).
func NewFile(f *os.File) *File {
	return &File{File: f, r: NewReader(f, nil)}
}

// Read reads through the Guard (see Reader.Read); after Detach it reads
// nothing (io.EOF).
func (f *File) Read(p []byte) (int, error) {
	if f.detached.Load() {
		return 0, io.EOF
	}
	return f.r.Read(p)
}

// Fd is the terminal's descriptor, or after Detach none (^uintptr(0)), so
// that whatever still holds the File can no longer change the terminal.
func (f *File) Fd() uintptr {
	if f.detached.Load() {
		return ^uintptr(0)
	}
	return f.File.Fd()
}

// Detach cuts the File from the terminal, for a program that gave the
// terminal back and must end without touching it again (a suspended app
// ended by a signal, while the shell has the terminal).
func (f *File) Detach() { f.detached.Store(true) }

// Wrap returns in read through a Guard: a File for an *os.File, else a
// Reader.
func Wrap(in io.Reader) io.Reader {
	if f, ok := in.(*os.File); ok {
		return NewFile(f)
	}
	return NewReader(in, nil)
}
