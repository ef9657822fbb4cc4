package workshop

import (
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"go.uber.org/goleak"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/time/rate"
)

// endSession runs one attendee's session to the home screen and ends it
// as how says: "q" (the attendee quits) or "hangup" (the client goes away
// mid-session: its connection is closed under the app). It
// returns once the room has seen the attendee leave. It uses no test
// helper that registers a clean-up, so that nothing of the client is left
// when it returns.
func endSession(tb testing.TB, w *Workshop, name, how string) { endSessionOn(tb, w, name, how, "") }

// endSessionOn is endSession for a session opened with cmd ("" for the
// home screen, "play lost-answer" for a play screen and its run).
func endSessionOn(tb testing.TB, w *Workshop, name, how, cmd string) {
	tb.Helper()
	client, err := dial(w, name, nil, password(testCode))
	if err != nil {
		tb.Fatalf("ssh %s: %v", name, err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		tb.Fatal(err)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 24, 80, gossh.TerminalModes{}); err != nil {
		tb.Fatal(err)
	}
	want := "Play: the lost answer" // the home screen
	if cmd == "" {
		err = sess.Shell()
	} else {
		want, err = "book 2, key", sess.Start(cmd) // the play screen, its run started
	}
	if err != nil {
		tb.Fatal(err)
	}
	emu := vt.NewEmulator(80, 24)
	home := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		seen := false
		for {
			n, err := stdout.Read(buf)
			_, _ = emu.Write(buf[:n])
			if !seen && strings.Contains(emu.String(), want) {
				seen = true
				close(home)
			}
			if err != nil {
				return
			}
		}
	}()
	answers := make(chan struct{})
	go func() { // the terminal's answers are not needed
		defer close(answers)
		_, _ = io.Copy(io.Discard, emu)
	}()
	select {
	case <-home:
	case <-read:
		tb.Fatalf("%s's session ended before %q:\n%s", name, want, emu.String())
	}
	switch how {
	case "q":
		if _, err := stdin.Write([]byte("q")); err != nil {
			tb.Fatal(err)
		}
		<-read
		_ = sess.Wait()
	case "hangup":
		_ = client.Close()
		<-read
	}
	_ = client.Close()
	if pw, ok := emu.InputPipe().(*io.PipeWriter); ok {
		_ = pw.CloseWithError(io.EOF)
	}
	<-answers
	waitUntil(tb, name+" to have left the room", func() string {
		for _, a := range w.Room().Snapshot(0).Attendees {
			if a.Name == name && !a.Connected {
				return "left"
			}
		}
		return "connected"
	}, func(s string) bool { return s == "left" })
}

// An ended session, however it ended, on the home screen or with a run
// going, leaves nothing running: no goroutine of its program (its idle
// clock included, which is its idle time away) or of its run is left
// once the room has seen it leave. Before, each ended
// session's idle tick kept its whole program for the idle time (30
// minutes by default).
func TestEndedSessionLeavesNothingRunning(t *testing.T) {
	w := startWorkshop(t, Config{Idle: time.Hour})
	endSession(t, w, "warm", "q") // what starts once for the first session
	ignore := goleak.IgnoreCurrent()
	for i, how := range []string{"q", "hangup", "q", "hangup"} {
		endSession(t, w, "ada"+itoa(i), how)
	}
	for i, how := range []string{"q", "hangup"} { // with a run going: its stage, pools and schema
		endSessionOn(t, w, "ben"+itoa(i), how, "play lost-answer")
	}
	// The sessions' connections end after their handlers: wait for them,
	// then for every goroutine the sessions had.
	if err := goleak.Find(ignore); err != nil {
		t.Errorf("ended sessions left goroutines running:\n%v", err)
	}
}

// BenchmarkEndedSessionMemory reports the live heap each ended session
// leaves (B/ended-session, after a GC), over b.N sessions of one attendee
// that quit or hang up (the room keeps one record per name, by design),
// and the goroutines left (goroutines/ended-session).
// Before the fix each kept about 0.9 MB for the idle time.
func BenchmarkEndedSessionMemory(b *testing.B) {
	w := startWorkshop(b, Config{Idle: time.Hour, Logf: func(string, ...any) {}, sessions: &sessionRate{perSecond: rate.Inf}})
	ended := func(n int) {
		for i := range n {
			endSession(b, w, "bench", []string{"q", "hangup"}[i%2])
		}
	}
	ended(3) // warm up
	heap := func() (uint64, int) {
		var m runtime.MemStats
		for range 3 {
			runtime.GC()
		}
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, runtime.NumGoroutine()
	}
	h0, g0 := heap()
	b.ResetTimer()
	ended(b.N)
	b.StopTimer()
	h1, g1 := heap()
	b.ReportMetric(float64(int64(h1)-int64(h0))/float64(b.N), "B/ended-session")
	b.ReportMetric(float64(g1-g0)/float64(b.N), "goroutines/ended-session")
}
