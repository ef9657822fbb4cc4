package pgtemp

import (
	"strings"
	"sync"
)

// tailBuffer keeps the last max bytes written to it: the end of a server's
// log, which is what explains a failure, without letting a chatty server
// grow learn's memory.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// Tail returns at most the last n lines, trimmed, for an error message.
func (b *tailBuffer) Tail(n int) string {
	b.mu.Lock()
	s := strings.TrimSpace(string(b.buf))
	b.mu.Unlock()
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
