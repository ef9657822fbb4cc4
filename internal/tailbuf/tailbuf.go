// Package tailbuf keeps the end of a stream: the last bytes of a server's
// log or of a child's standard error, which is what explains a failure,
// without letting a chatty writer grow learn's memory. A [Buffer] is safe
// for one writer and many readers at once.
package tailbuf

import (
	"strings"
	"sync"
)

// Buffer keeps the last Max bytes written to it; Write never fails.
type Buffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// New is a Buffer that keeps the last max bytes.
func New(max int) *Buffer { return &Buffer{max: max} }

// Write keeps p's bytes, dropping the oldest beyond the bound.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return len(p), nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Bytes returns a copy of what is kept.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}

// Lines returns at most the last n lines of what is kept, trimmed, for an
// error message.
func (b *Buffer) Lines(n int) string {
	lines := strings.Split(strings.TrimSpace(string(b.Bytes())), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
