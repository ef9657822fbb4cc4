package tailbuf

import (
	"bytes"
	"strings"
	"testing"
)

// What is kept is the last max bytes of all that was written, however the
// writes were cut, and never more.
func TestKeepsTheLastBytes(t *testing.T) {
	var all bytes.Buffer
	b := New(8)
	for _, w := range []string{"abc", "defgh", "i", "jklmnopqrstuvwxyz", "", "12"} {
		_, _ = b.Write([]byte(w))
		all.WriteString(w)
		want := all.Bytes()[max(0, all.Len()-8):]
		if got := b.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("after %q: kept %q, want %q", w, got, want)
		}
		if cap(b.buf) > 2*8+len(w) {
			t.Fatalf("after %q: the buffer holds %d bytes of room", w, cap(b.buf))
		}
	}
}

// Lines is the last n lines, trimmed.
func TestLines(t *testing.T) {
	b := New(64)
	_, _ = b.Write([]byte("one\ntwo\nthree\nfour\n\n"))
	if got := b.Lines(2); got != "three\nfour" {
		t.Errorf("Lines(2) = %q", got)
	}
	if got := b.Lines(9); got != strings.TrimSpace("one\ntwo\nthree\nfour") {
		t.Errorf("Lines(9) = %q", got)
	}
}
