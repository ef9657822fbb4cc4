package workshop

import (
	"context"
	"errors"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
)

// testDB is this package's PostgreSQL: a throwaway local cluster, or the
// server LEARN_TEST_DATABASE points at. The workshops of the tests run on
// it (Config.Server).
var testDB *pgtemp.Server

func TestMain(m *testing.M) { os.Exit(pgtemptest.Main(m, "internal/workshop", &testDB)) }

const testCode = "kq7m-3hxt"

// startWorkshop starts a workshop on testDB, on a free loopback port, with
// a host key of the test's own; it is closed when the test ends.
func startWorkshop(t testing.TB, cfg Config) *Workshop {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	cfg.Server = testDB
	if cfg.Code == "" {
		cfg.Code = testCode
	}
	cfg.HostKey = filepath.Join(t.TempDir(), "host_key")
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	if cfg.wrongWait == nil { // a wrong code is answered at once (a test of the wait sets its own)
		cfg.wrongWait = func(context.Context, time.Duration) {}
	}
	w, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w
}

// dial connects to w as user with auth; banners the server sends go to
// banner (nil: dropped).
func dial(w *Workshop, user string, banner *strings.Builder, auth ...gossh.AuthMethod) (*gossh.Client, error) {
	var mu sync.Mutex
	cfg := &gossh.ClientConfig{User: user, Auth: auth, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second,
		BannerCallback: func(msg string) error {
			if banner != nil {
				mu.Lock()
				banner.WriteString(msg)
				mu.Unlock()
			}
			return nil
		}}
	return gossh.Dial("tcp", w.Addr().String(), cfg)
}

func password(code string) gossh.AuthMethod { return gossh.Password(code) }

// attendee is one attendee's ssh session with a terminal, read through a
// virtual terminal; the terminal's answers to queries go back to the app.
type attendee struct {
	t      *testing.T
	client *gossh.Client
	sess   *gossh.Session
	in     *lockedWriter
	scr    *uitest.Screen
	stderr *uitest.Buffer
	raw    *uitest.Buffer // everything the app wrote, for what is printed after it
	done   chan error     // the session's end
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// attend connects as user with the code, asks for a terminal of w x h
// and starts cmd ("" for the app); bg is the terminal's background.
func attend(t *testing.T, ws *Workshop, user string, w, h int, cmd string, bg color.Color) *attendee {
	t.Helper()
	client, err := dial(ws, user, nil, password(testCode))
	if err != nil {
		t.Fatalf("ssh %s: %v", user, err)
	}
	return attendOn(t, client, w, h, cmd, bg)
}

func attendOn(t *testing.T, client *gossh.Client, w, h int, cmd string, bg color.Color, env ...string) *attendee {
	t.Helper()
	return attendAsking(t, client, w, h, w, h, cmd, bg, env...)
}

// attendAsking is attendOn with a terminal of w x h that asks the server
// for askW x askH (a client that claims more than it has).
func attendAsking(t *testing.T, client *gossh.Client, askW, askH, w, h int, cmd string, bg color.Color, env ...string) *attendee {
	t.Helper()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(env); i += 2 {
		if err := sess.Setenv(env[i], env[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	a := &attendee{t: t, client: client, sess: sess, scr: uitest.NewScreen(w, h), stderr: &uitest.Buffer{}, raw: &uitest.Buffer{}, done: make(chan error, 1)}
	if bg != nil {
		a.scr.SetBackground(bg)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.in = &lockedWriter{w: stdin}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sess.Stderr = a.stderr
	if err := sess.RequestPty("xterm-256color", askH, askW, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if cmd == "" {
		err = sess.Shell()
	} else {
		err = sess.Start(cmd)
	}
	if err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() { // the terminal's answers (the background colour) go to the app
		defer close(copied)
		_, _ = io.Copy(a.in, a.scr.Answers())
	}()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := stdout.Read(buf)
			if n > 0 {
				_, _ = a.raw.Write(buf[:n])
				_, _ = a.scr.Write(buf[:n])
			}
			if err != nil {
				a.done <- sess.Wait()
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = client.Close()
		a.scr.Close()
		<-copied
	})
	return a
}

func (a *attendee) screen() string { return a.scr.String() }

// waitFor waits until every want is on the attendee's screen, and returns
// the screen.
func (a *attendee) waitFor(want ...string) string {
	a.t.Helper()
	a.scr.WaitFor(a.t, want...)
	return a.screen()
}

// waitUntil reads get until ok holds for what it returns, and returns
// that. What it reads (the room's state, a budget, a socket, a screen)
// says nothing to a second reader when it changes (the room's Changed has
// one reader, the dashboard), so it is read again at each tick of a
// ticker, a poll that takes no pause of its own. A wait has no limit of
// its own: it fails with the last value shortly before the test binary's
// -timeout would end it with no word of what it waited for.
func waitUntil(t testing.TB, what string, get func() string, ok func(string) bool) string {
	t.Helper()
	guard, stop := uitest.Guard(t)
	defer stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s := get()
		if ok(s) {
			return s
		}
		select {
		case <-tick.C:
		case <-guard:
			t.Fatalf("%s never came; last:\n%s", what, s)
		}
	}
}

// press types keys: runes as they are, and a few names.
func (a *attendee) press(keys ...string) {
	a.t.Helper()
	for _, k := range keys {
		seq := map[string]string{"enter": "\r", "down": "\x1b[B", "up": "\x1b[A", "space": " ", "tab": "\t", "ctrl+c": "\x03"}[k]
		if seq == "" {
			seq = k
		}
		if _, err := a.in.Write([]byte(seq)); err != nil {
			a.t.Fatalf("typing %q: %v", k, err)
		}
	}
}

// ended waits for the session to end and returns its exit error (nil for
// exit status 0).
func (a *attendee) ended() error {
	a.t.Helper()
	select {
	case err := <-a.done:
		return err
	case <-a.t.Context().Done():
		a.t.Fatal("the session never ended")
	}
	return nil
}

// exitStatus is err's exit status (0 for nil).
func exitStatus(err error) int {
	var ee *gossh.ExitError
	if errors.As(err, &ee) {
		return ee.ExitStatus()
	}
	if err != nil {
		return -1
	}
	return 0
}

// otherSchemas is the learn_ schemas in testDB that this process's own
// pgtemp.Server (testDB) did not make: those of the workshops' servers.
func otherSchemas(t *testing.T) []string {
	t.Helper()
	return pgtemptest.LearnSchemas(t, testDB.ConnString(), 0, testDB.Schemas())
}
