package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/ttyin/ttyintest"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
)

// terminalApp is the app run by Run, as learn runs it, at a pseudo
// terminal of 80x24 whose other end the test types into.
type terminalApp struct {
	pty    *os.File // the terminal's side: what is typed, what is drawn
	tty    *os.File // the app's side
	done   chan error
	cancel context.CancelFunc
	errs   *strings.Builder
	typing sync.WaitGroup
}

// runAtTerminal starts Run on first at a new pseudo terminal of 80x24,
// with its PostgreSQL a schema in testDB and its progress in a directory
// of the test's own.
func runAtTerminal(t *testing.T, first common.Open) *terminalApp {
	t.Helper()
	return runAtTerminalOf(t, first, 80, 24, io.Discard)
}

// runAtTerminalOf is runAtTerminal at a terminal of w x h whose screen
// (what the app writes) goes to screen.
func runAtTerminalOf(t *testing.T, first common.Open, w, h int, screen io.Writer) *terminalApp {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := pty.Setsize(tty, &pty.Winsize{Rows: uint16(h), Cols: uint16(w)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	a := &terminalApp{pty: ptm, tty: tty, done: make(chan error, 1), cancel: cancel, errs: &strings.Builder{}}
	drained := make(chan struct{})
	go func() { // nobody answers the app's queries
		defer close(drained)
		_, _ = io.Copy(screen, ptm)
	}()
	go func() {
		a.done <- Run(ctx, Config{First: first, Theme: "dark",
			Postgres: pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: testDB.ConnString()},
			In:       tty, Out: tty, Errors: a.errs})
	}()
	t.Cleanup(func() {
		cancel()
		<-a.done
		_ = tty.Close()
		_ = ptm.Close()
		<-drained
		a.typing.Wait()
	})
	return a
}

// waitRaw waits until the app has put its terminal in raw mode: before,
// the line discipline would take a Ctrl-C as a signal for nobody.
func (a *terminalApp) waitRaw(t *testing.T) {
	t.Helper()
	for {
		st, err := unix.IoctlGetTermios(int(a.tty.Fd()), ioctlGetTermios)
		if err != nil {
			t.Fatal(err)
		}
		if st.Lflag&unix.ISIG == 0 {
			return
		}
		select {
		case err := <-a.done:
			a.done <- err
			t.Fatalf("the app ended (%v) before it took the terminal", err)
		case <-t.Context().Done():
			t.Fatal("the app never took the terminal")
		case <-time.After(10 * time.Millisecond): // polling for the event
		}
	}
}

// typeIn writes reads at the terminal, one after the other, from a
// goroutine of its own: the app may quit before it has read them all, and
// the writing then ends when the test does.
func (a *terminalApp) typeIn(reads ...[]byte) {
	a.typing.Go(func() {
		for _, b := range reads {
			if _, err := a.pty.Write(b); err != nil {
				return
			}
		}
	})
}

// ended waits for Run to return.
func (a *terminalApp) ended(t *testing.T) error {
	t.Helper()
	select {
	case err := <-a.done:
		a.done <- err // for the cleanup
		return err
	case <-t.Context().Done():
		t.Fatal("the app never ended")
		return nil
	}
}

// The sequences that panicked Bubble Tea's input decoder, typed at the
// app's terminal, neither crash learn nor take its keys: q typed after
// them quits it, cleanly. Before, the first of them ended the process with
// a panic (the test binary with it).
func TestHostileInputCannotCrashTheApp(t *testing.T) {
	hostile := ttyintest.Hostile()
	names := make([]string, 0, len(hostile))
	for n := range hostile {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(hostile[n])
	}
	a := runAtTerminal(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}})
	a.typeIn([]byte(b.String() + "q"))
	if err := a.ended(t); err != nil {
		t.Errorf("the app ended with %v, want a quit (nil); it said: %s", err, a.errs)
	}
}

// randomAppRuns is how many apps TestRandomInputCannotCrashTheApp runs,
// each typed randomInputBytes random bytes.
const (
	randomAppRuns    = 3
	randomInputBytes = 4 << 10
)

// Random bytes and pieces of escape sequences typed at the app's terminal
// end it only as a person can (q, Ctrl-C) or not at all: never with a
// panic nor another error. The input is drawn from a seed the test logs.
func TestRandomInputCannotCrashTheApp(t *testing.T) {
	seed := ttyintest.Seed(t)
	r := ttyintest.NewRand(seed)
	for i := range randomAppRuns {
		input := ttyintest.Random(r, randomInputBytes)
		pages := []common.Open{{Place: progress.Place{Page: progress.PageHome}}, {Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, {Place: progress.Place{Page: progress.PageRace}}}
		first := pages[i%len(pages)]
		t.Run(fmt.Sprintf("app %d", i), func(t *testing.T) {
			a := runAtTerminal(t, first)
			a.typeIn(ttyintest.Split(r, input, 20)...)
			a.cancel()
			err := a.ended(t)
			if sig, _ := errors.AsType[*exit.Error](err); err != nil && !errors.Is(err, context.Canceled) && (sig == nil || sig.Signal == 0) {
				t.Errorf("seed %d (%s=%d), app %d: the app ended with %v; it said: %s\ninput: %q",
					seed, ttyintest.EnvSeed, seed, i, err, a.errs, input)
			}
		})
	}
}

// A bracketed paste that never ends (its end marker never comes) does not
// take the app's keys: Ctrl-C typed after it interrupts the app, as
// everywhere. Before, every key, Ctrl-C included, went into the paste.
func TestEndlessPasteLeavesCtrlCWorking(t *testing.T) {
	a := runAtTerminal(t, common.Open{Place: progress.Place{Page: progress.PageHome}})
	a.waitRaw(t)
	a.typeIn([]byte("\x1b[200~a paste whose end never comes"), []byte("\x03"))
	err := a.ended(t)
	if sig, ok := errors.AsType[*exit.Error](err); !ok || sig.Signal != syscall.SIGINT || exit.Code(err) != 130 {
		t.Errorf("the app ended with %v, want interrupted (Ctrl-C); it said: %s", err, a.errs)
	}
}
