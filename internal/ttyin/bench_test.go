package ttyin

import (
	"context"
	"io"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
)

// unfinished is an input of an OSC that never ends: its start, then n
// bytes of its data, 4 KiB a read.
type unfinished struct{ head, left int }

func (u *unfinished) Read(p []byte) (int, error) {
	const start = "\x1b]52;c;"
	if u.head < len(start) {
		n := copy(p, start[u.head:])
		u.head += n
		return n, nil
	}
	if u.left == 0 {
		return 0, io.EOF
	}
	k := min(len(p), 4096, u.left)
	for i := range k {
		p[i] = 'A'
	}
	u.left -= k
	return k, nil
}

// BenchmarkUnfinishedString reads 1 MiB of an OSC that never ends with
// ultraviolet's terminal reader, as Bubble Tea does, without and behind
// Guard: without, the reader decodes its whole buffer again at every read
// (time grows with the square of the length; measured 0.57 s for 1 MiB,
// 9.8 s for 4 MiB on the 2-core test machine), behind Guard the string is
// cut at MaxString (9.6 ms, 38 ms).
func BenchmarkUnfinishedString(b *testing.B) {
	for _, guarded := range []bool{false, true} {
		name := "without Guard"
		if guarded {
			name = "behind Guard"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				var r io.Reader = &unfinished{left: 1 << 20}
				if guarded {
					r = NewReader(r, nil)
				}
				evc := make(chan uv.Event, 1<<10)
				go func() {
					for range evc {
					}
				}()
				_ = uv.NewTerminalReader(r, "xterm-256color").StreamEvents(context.Background(), evc)
				close(evc)
			}
		})
	}
}
