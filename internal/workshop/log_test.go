package workshop

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/uitest"
)

// The server's log (what the presenter reads without the dashboard) says
// who joined and left in words, as the room's feed does; the SSH
// library's own lines (wish's logging middleware, "app exit with error"
// for a client that hung up) are not in it.
func TestTheLogSaysWhoCameAndWentInWords(t *testing.T) {
	var log uitest.Buffer
	w := startWorkshop(t, Config{Logf: func(format string, args ...any) {
		fmt.Fprintf(&log, format+"\n", args...)
		t.Logf(format, args...)
	}})
	ada := attend(t, w, "ada", 80, 24, "", nil)
	ada.waitFor("Lesson: Idempotency")
	ada.client.Close() // ada hangs up: wish's middleware finds her program killed
	left := regexp.MustCompile(`(?m)^ada left after (under a second|\d+s): disconnected$`)
	got := waitUntil(t, "ada's leaving in the log", log.String, left.MatchString)
	if !strings.Contains(got, "ada joined from 127.0.0.1 (80x24)\n") {
		t.Errorf("the log does not say ada joined, in words:\n%s", got)
	}
	for _, raw := range []string{"connect 127.0.0.1:", " disconnect ", "app exit with error", "program was killed", "SSH-2.0-"} {
		if strings.Contains(got, raw) {
			t.Errorf("the log has the library's line %q:\n%s", raw, got)
		}
	}
	var feed []string
	for _, e := range w.Room().Snapshot(20).Feed {
		feed = append(feed, e.Text)
	}
	if f := strings.Join(feed, "\n") + "\n"; !strings.Contains(f, "ada joined from 127.0.0.1 (80x24)\n") || !left.MatchString(f) {
		t.Errorf("the feed does not say it so:\n%s", f)
	}
}

// A line of charm's logger from wish's Bubble Tea middleware: a program
// killed (a client that hung up) is dropped, since the session says it in
// words; anything else reaches the presenter, said to be an error.
func TestLibraryLinesAreDroppedOrSaidInWords(t *testing.T) {
	var log uitest.Buffer
	w := startWorkshop(t, Config{Logf: func(format string, args ...any) { fmt.Fprintf(&log, format+"\n", args...) }})
	w.libraryLog("ERRO app exit with error error=\"program was killed: context canceled\"\n")
	if got := log.String(); got != "" {
		t.Errorf("a killed program was logged: %q", got)
	}
	w.libraryLog("ERRO panic in window change handler panic=boom\n")
	want := "an attendee's app ended with an error: ERRO panic in window change handler panic=boom\n"
	if got := log.String(); got != want {
		t.Errorf("the log %q, want %q", got, want)
	}
}
