package main

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/charmbracelet/x/vt"

	"github.com/learn-idempotency/learn/sim/pgtemp"
)

// uiTest runs the app in teatest and replays its output through a virtual
// terminal, so assertions read the screen as a user sees it.
type uiTest struct {
	tm  *teatest.TestModel
	m   *model
	mu  sync.Mutex // guards emu: vt's emulator is not safe for concurrent use
	emu *vt.Emulator
	// finished is set by a test that saw the program end.
	finished bool
}

// readyDB is a launcher whose start has finished with srv; tests never
// close it (srv belongs to TestMain).
func readyDB(srv *pgtemp.Server) *dbLauncher {
	l := &dbLauncher{cancel: func() {}, done: make(chan struct{}), started: time.Now(), progress: "ready", srv: srv}
	close(l.done)
	return l
}

func startUI(t *testing.T, first openMsg, w, h int) *uiTest {
	t.Helper()
	c := &common{st: newStyles(true), keys: newKeyMap(), theme: "dark", docStyle: "dark",
		db: readyDB(testDB), docs: map[docKey]string{}}
	m := newModel(c, first)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	u := &uiTest{tm: tm, emu: vt.NewEmulator(w, h), m: m}
	done := make(chan struct{})
	go func() { // the terminal's answers to queries go nowhere
		_, _ = io.Copy(io.Discard, u.emu)
	}()
	go func() {
		defer close(done)
		out := tm.Output()
		buf := make([]byte, 32<<10)
		for {
			n, err := out.Read(buf)
			if n > 0 {
				// Without a terminal Bubble Tea counts on the line
				// discipline to turn \n into \r\n (ONLCR); do it here.
				u.mu.Lock()
				_, _ = u.emu.Write(bytes.ReplaceAll(buf[:n], []byte("\n"), []byte("\r\n")))
				u.mu.Unlock()
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
	t.Cleanup(func() {
		if !u.finished {
			_ = tm.Quit()
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
		}
		m.close()
		// The emulator is not closed: its Close races with the Read of the
		// goroutine above, which ends with the test binary.
	})
	return u
}

// screen is the virtual terminal's text, lines joined by newlines.
func (u *uiTest) screen() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.emu.String()
}

// waitFor waits until every want is on screen; it fails with the screen.
func (u *uiTest) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := u.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never appeared; the screen:\n%s", missing, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (u *uiTest) press(keys ...string) {
	for _, k := range keys {
		u.tm.Send(keyPress(k))
	}
}

// keyPress builds the key press message Bubble Tea sends for k.
func keyPress(k string) tea.KeyPressMsg {
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
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

func TestHomeOpensTheLessonAt80x24(t *testing.T) {
	u := startUI(t, openMsg{screen: screenHome}, 80, 24)
	u.waitFor(t, "Lesson: Idempotency", "Play: the lost answer", "PostgreSQL ready")
	u.press("enter")
	u.waitFor(t, "Idempotency", "In 1 minute", "idempotent")
	u.press("tab")
	u.waitFor(t, "Picture it", "Browser")
	u.press("esc")
	u.waitFor(t, "Interview card")
	u.press("down", "enter")
	u.waitFor(t, "Say it in 30 seconds")
	u.press("?")
	u.waitFor(t, "Keys", "next section")
}

func TestPlayLostAnswerReachesTheFinalStateAt80x24(t *testing.T) {
	u := startUI(t, openMsg{screen: screenPlay, name: "lost-answer"}, 80, 24)
	u.waitFor(t, "step 1 ", "book 2, key", "seats_left 10/10", "bookings: none")
	for step := 2; step <= 12; step++ {
		u.press("n")
		u.waitFor(t, "step "+strconv.Itoa(step)+" ")
	}
	u.press("n")
	u.waitFor(t, "Done:", "200 b1 (replay)", "1 lost", "2 seats taken", "seats_left 8/10", "find key → b1")
	s := u.screen()
	for _, want := range []string{"✕", "lost", "wait 1s", "write nothing, COMMIT", "replayed for a"} {
		if !strings.Contains(s, want) {
			t.Errorf("final screen lacks %q:\n%s", want, s)
		}
	}
	rep := u.m.play.report
	if rep == nil || rep.Lost != 1 || rep.BookingRows != 1 || rep.SeatsTaken != 2 || len(rep.Answers) != 1 || !rep.Answers[0].Replayed {
		t.Errorf("report = %+v", rep)
	}
}

func TestTooSmallWindowAsksForMore(t *testing.T) {
	u := startUI(t, openMsg{screen: screenHome}, 50, 15)
	u.waitFor(t, "make the window larger")
}

// The picker lists every scenario; v picks the broken variant, which the
// play screen runs live to its wrong answer.
func TestPickerPlaysABrokenVariant(t *testing.T) {
	u := startUI(t, openMsg{screen: screenHome}, 100, 30)
	u.waitFor(t, "Scenarios: all 13")
	u.press("down", "down", "down", "enter")
	u.waitFor(t, "The lost answer", "Replay after sell-out", "v picks correct or broken")
	u.press("j", "j", "j", "v")
	u.waitFor(t, "the key is looked up after the seat check")
	u.press("enter")
	u.waitFor(t, "Play: The last seats · broken", "step 1 ")
	u.press("+", "+", "space") // 4x
	u.waitFor(t, "Done:", "409 Not enough seats left", "1 lost", "2 seats taken")
	u.press("esc")
	u.waitFor(t, "v picks correct or broken")
}

func TestQuitFromTheHelpOverlay(t *testing.T) {
	u := startUI(t, openMsg{screen: screenHome}, 80, 24)
	u.waitFor(t, "Lesson: Idempotency")
	u.press("?")
	u.waitFor(t, "q quits")
	u.press("q")
	u.tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	u.finished = true
}

// Tab reaches every section, the last ones too, although the page cannot
// scroll their headings to the top.
func TestTabReachesTheLastSection(t *testing.T) {
	u := startUI(t, openMsg{screen: screenReader, name: "idempotency"}, 80, 24)
	u.waitFor(t, "In 1 minute")
	for range 12 {
		u.press("tab")
	}
	u.waitFor(t, "Idempotency · Try this")
	u.press("shift+tab")
	u.waitFor(t, "Idempotency · Redraw it")
}

// A burst of n presses steps as many times, even though each step arrives
// after the press that asked for it.
func TestBurstOfStepsIsNotLost(t *testing.T) {
	u := startUI(t, openMsg{screen: screenPlay, name: "lost-answer"}, 80, 24)
	u.waitFor(t, "step 1 ")
	for range 12 {
		u.press("n")
	}
	u.waitFor(t, "Done:", "200 b1 (replay)")
}
