// Package syncbuf is [Buffer], a bytes.Buffer safe for one writer and
// many readers at once: the log or the output a test reads while a server
// or a program writes to it, waited on by its writes ([Buffer.Changed]),
// never by sleeping. The UI tests' kit (internal/uitest) and the API
// tests' kit (sim/api/apitest) both hand it out; it imports nothing of
// learn, so any package's tests may use it.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for one writer and many readers at once.
// Its zero value is empty and ready to use.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed, and made anew, at each write
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.b.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Len is how many bytes were written so far.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Len()
}

// Changed is closed at the next write: take it before reading the
// buffer, so that a write meanwhile is not missed.
func (b *Buffer) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}
