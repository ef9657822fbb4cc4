package ui

import (
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/progress"
)

// extent is the widest line of the screen and the last line with text.
func extent(screen string) (width, height int) {
	for i, l := range strings.Split(screen, "\n") {
		if l = strings.TrimRight(l, " "); l != "" {
			width, height = max(width, len([]rune(l))), i+1
		}
	}
	return width, height
}

// waitExtent waits until ok holds for the screen's extent.
func waitExtent(t *testing.T, s *uitest.Screen, what string, ok func(w, h int, screen string) bool) (int, int) {
	t.Helper()
	s.Wait(t, what, func(screen string) bool {
		w, h := extent(screen)
		return ok(w, h, screen)
	})
	return extent(s.String())
}

// The local app draws at most common.MaxWidth x common.MaxHeight, as a
// workshop's sessions are capped, whatever the window's size at the start
// or after a resize: a larger window is drawn in its top left. Before, it
// drew (and held in memory) every cell of a 1000x1000 window.
func TestHugeWindowIsCappedLocally(t *testing.T) {
	for _, size := range [][2]int{{1000, 40}, {100, 1000}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			// The home page's right column ("not read yet") ends at the
			// window's right edge, its footer ("q quit") on its last line.
			for _, resize := range []bool{false, true} {
				start := [2]int{w, h}
				if resize {
					start = [2]int{80, 24}
				}
				scr := uitest.NewScreen(w, h)
				drained := make(chan struct{})
				go func() { defer close(drained); _, _ = io.Copy(io.Discard, scr.Answers()) }() // nobody reads its answers
				t.Cleanup(func() {
					scr.Close()
					<-drained
				})
				a := runAtTerminalOf(t, common.Open{Place: progress.Place{Page: progress.PageHome}}, start[0], start[1], scr)
				if resize {
					waitExtent(t, scr, "the home screen at 80x24", func(_, _ int, s string) bool { return strings.Contains(s, "q quit") })
					if err := pty.Setsize(a.tty, &pty.Winsize{Cols: uint16(w), Rows: uint16(h)}); err != nil {
						t.Fatal(err)
					}
					// The terminal tells its foreground group; this process
					// is not one, so it tells itself.
					if err := syscall.Kill(syscall.Getpid(), syscall.SIGWINCH); err != nil {
						t.Fatal(err)
					}
				}
				gotW, gotH := waitExtent(t, scr, "the home screen at its capped size", func(w, h int, s string) bool {
					return strings.Contains(s, "q quit") && (w > 80 || h > 24)
				})
				if gotW > min(w, common.MaxWidth) || gotH > min(h, common.MaxHeight) {
					t.Errorf("resize %v: drawn %dx%d in a window of %dx%d, want at most %dx%d", resize, gotW, gotH, w, h,
						min(w, common.MaxWidth), min(h, common.MaxHeight))
				}
				if gotW < min(w, common.MaxWidth)-1 && gotH < min(h, common.MaxHeight)-1 {
					t.Errorf("resize %v: drawn %dx%d: the app does not fill its capped window", resize, gotW, gotH)
				}
				a.cancel()
				_ = a.ended(t)
			}
		})
	}
}
