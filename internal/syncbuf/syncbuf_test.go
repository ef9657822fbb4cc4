package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers and readers at once (run with -race): every write is kept, and
// a reader sees a prefix of the whole at any moment.
func TestWritersAndReadersAtOnce(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("ab"))
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			if s := b.String(); strings.Trim(s, "ab") != "" || len(s)%2 != 0 {
				t.Errorf("a reader saw %q", s)
				return
			}
			_ = b.Len()
		}
	})
	wg.Wait()
	if b.Len() != 800 || b.String() != strings.Repeat("ab", 400) {
		t.Errorf("%d bytes, want 800", b.Len())
	}
}
