// Package uitest is the test kit of learn's terminal UI, one for every UI
// test (the app's, the dashboard's, the workshop's sessions, the built
// binary's):
//
//   - [Screen] is a virtual terminal (charmbracelet/x/vt) that a program's
//     output is written into from one goroutine and read from another, and
//     that is waited on by its changes, never by sleeping: [Screen.Wait]
//     checks again each time something is written.
//   - [Follow] copies a teatest program's output into a Screen.
//   - [Key] is the key press Bubble Tea sends for a key's name.
//   - [Buffer] is a bytes.Buffer safe for a writer and a reader at once (a
//     process's standard error read while it runs), waited on by its
//     writes.
package uitest

import (
	"bytes"
	"image/color"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/charmbracelet/x/vt"

	"github.com/learn-idempotency/learn/internal/syncbuf"
)

// Screen is a virtual terminal of a fixed size. vt's emulators (its
// SafeEmulator's String too) are not safe for a writer and a reader at
// once; a Screen is.
type Screen struct {
	mu      sync.Mutex
	emu     *vt.Emulator
	changed chan struct{} // closed, and made anew, at each write
}

// NewScreen is a w x h virtual terminal.
func NewScreen(w, h int) *Screen {
	return &Screen{emu: vt.NewEmulator(w, h), changed: make(chan struct{})}
}

// SetBackground sets the terminal's default background colour, which it
// answers to a program that asks (OSC 11).
func (s *Screen) SetBackground(c color.Color) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emu.SetDefaultBackgroundColor(c)
}

// Write puts a program's output on the screen.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.emu.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return n, err
}

// String is the screen's text, lines joined by newlines.
func (s *Screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.String()
}

// Resize changes the terminal's size, as a window's change does (send the
// program its new size too).
func (s *Screen) Resize(w, h int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emu.Resize(w, h)
}

// Do calls f with the emulator, for what String does not say (a cell's
// style): f must not keep it.
func (s *Screen) Do(f func(emu *vt.Emulator)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.emu)
}

// Changed is closed at the next write.
func (s *Screen) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Answers is what the terminal answers to the program's queries (its
// colours, its size, the cursor's place), to send back to the program or
// to drop; read it until it ends (Close).
func (s *Screen) Answers() io.Reader { return s.emu }

// Close ends Answers (the emulator's own Close races with its Read).
func (s *Screen) Close() {
	if pw, ok := s.emu.InputPipe().(*io.PipeWriter); ok {
		_ = pw.CloseWithError(io.EOF)
	}
}

// Wait returns once ok holds for the screen's text, checking it again each
// time the screen changes and, for a condition that also reads what is not
// on the screen, every tenth of a second. A wait has no limit of its own:
// what it waits for comes however slowly the machine runs; when it never
// holds, the test fails saying what it waited for, with the screen,
// shortly before the test binary's -timeout would end it with no word of
// either.
func (s *Screen) Wait(t testing.TB, what string, ok func(screen string) bool) {
	t.Helper()
	s.WaitOr(t, ok, func() string { return what + " never happened" })
}

// WaitOr is Wait failing with failure's words, asked for when it fails.
func (s *Screen) WaitOr(t testing.TB, ok func(screen string) bool, failure func() string) {
	t.Helper()
	guard, stop := Guard(t)
	defer stop()
	offScreen := time.NewTicker(100 * time.Millisecond)
	defer offScreen.Stop()
	for {
		changed := s.Changed()
		if ok(s.String()) {
			return
		}
		select {
		case <-changed:
		case <-offScreen.C:
		case <-guard:
			t.Fatalf("%s; the screen:\n%s", failure(), s.String())
		}
	}
}

// Guard fires a little before the test binary's -timeout (a twentieth of
// the time left, and 5 s), so that a wait for what never comes fails
// saying what it waited for; it never fires without a -timeout, or for a
// t that has no deadline. Call stop once the wait is over.
func Guard(t testing.TB) (guard <-chan time.Time, stop func()) {
	tt, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return nil, func() {}
	}
	end, ok := tt.Deadline()
	if !ok {
		return nil, func() {}
	}
	left := time.Until(end)
	timer := time.NewTimer(left - left/20 - 5*time.Second)
	return timer.C, func() { timer.Stop() }
}

// WaitFor waits until every one of want is on the screen.
func (s *Screen) WaitFor(t testing.TB, want ...string) {
	t.Helper()
	s.Wait(t, strings.Join(want, ", ")+" on the screen", func(screen string) bool {
		for _, w := range want {
			if !strings.Contains(screen, w) {
				return false
			}
		}
		return true
	})
}

// Follow copies tm's output onto s, whole frames at a time, until the
// program's output ends or t's context does, and drops the screen's
// answers (teatest's program has no input to take them). Without a
// terminal Bubble Tea counts on the line discipline to turn \n into \r\n
// (ONLCR): Follow does it. stop waits for both copies to end; call it once
// the program has finished.
func Follow(t testing.TB, tm *teatest.TestModel, s *Screen) (stop func()) {
	done, dropped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(dropped)
		_, _ = io.Copy(io.Discard, s.Answers())
	}()
	go func() {
		defer close(done)
		// teatest keeps the output in a buffer that says nothing when it
		// grows: it is read every few milliseconds, all of it at once, so
		// that the screen takes each frame whole.
		out := tm.Output()
		buf := make([]byte, 1<<20)
		for {
			n, err := out.Read(buf)
			if n > 0 {
				_, _ = s.Write(bytes.ReplaceAll(buf[:n], []byte("\n"), []byte("\r\n")))
			}
			if err != nil && err != io.EOF {
				return
			}
			if n == 0 {
				select {
				case <-t.Context().Done():
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}
	}()
	return func() {
		<-done
		s.Close()
		<-dropped
	}
}

// Key is the key press Bubble Tea sends for the key named k: "enter",
// "esc", "tab", "shift+tab", "space", "up", "down", "left", "right",
// "pgup", "pgdown", "home", "end", "backspace", "ctrl+" and a letter, or
// one character.
func Key(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	if rest, ok := strings.CutPrefix(k, "ctrl+"); ok && len(rest) == 1 {
		return tea.KeyPressMsg{Code: rune(rest[0]), Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// Buffer is a bytes.Buffer safe for one writer and many readers at once,
// waited on by its writes (Changed), never by sleeping
// (syncbuf.Buffer, which the tests outside the UI use too).
type Buffer = syncbuf.Buffer
