package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"github.com/learn-idempotency/learn/pgtemp"
)

// A panic in any goroutine ends a Go program at once: no deferred cleanup
// runs and the terminal stays in raw mode on the alternate screen. So learn
// runs its work in a child process and watches it: when the child crashes,
// the parent restores the terminal, removes what the child left (its
// PostgreSQL cluster or container, through the same reaper a later run
// would use) and shows the crash report.

// envSupervised marks the child process.
const envSupervised = "LEARN_SUPERVISED"

// envCrashAfter makes the child panic in a goroutine of its own after the
// given duration: the fault injection the crash tests use.
const envCrashAfter = "LEARN_CRASH_AFTER"

// terminalReset undoes what a full-screen program may have turned on: the
// alternate screen, a hidden cursor, mouse reports, bracketed paste, the
// kitty keyboard protocol and any text style.
var terminalReset = ansi.ResetModeAltScreenSaveCursor + ansi.ShowCursor +
	ansi.ResetMode(ansi.ModeMouseButtonEvent, ansi.ModeMouseAnyEvent, ansi.ModeMouseExtSgr, ansi.ModeBracketedPaste) +
	ansi.PopKittyKeyboard(1) + ansi.ResetStyle

// maxStderr bounds what the parent keeps of the child's standard error.
const maxStderr = 1 << 20

// supervise runs learn with args in a child process and returns its exit
// code; ok is false when learn should run in this process instead (it is
// the child already, or the child cannot be started).
func supervise(args []string, stdin, stdout, stderr *os.File) (code int, ok bool) {
	if os.Getenv(envSupervised) != "" {
		return 0, false
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, false
	}
	cmdName, _ := splitCommand(args)
	fullScreen := isTerminal(stdin) && isTerminal(stdout) &&
		(cmdName == "" || cmdName == "play" || cmdName == "lesson" || cmdName == "interview")
	var saved *term.State
	if isTerminal(stdin) {
		saved, _ = term.GetState(stdin.Fd())
	}

	child := exec.Command(exe, args...)
	child.Env = append(os.Environ(), envSupervised+"=1")
	child.Stdin, child.Stdout = stdin, stdout
	child.SysProcAttr = childAttr()
	// The full-screen app's errors are shown once the terminal is back;
	// other commands (learn serve logs) write through as they go.
	errs := &tailBuffer{max: maxStderr}
	if fullScreen {
		child.Stderr = errs
	} else {
		child.Stderr = io.MultiWriter(stderr, errs)
	}
	if err := child.Start(); err != nil {
		return 0, false
	}

	// Signals go to the child, which cleans up and exits (or, for SIGQUIT and
	// the like, crashes as the sender meant, and the parent cleans up); the
	// parent waits.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT,
		syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGUSR1, syscall.SIGUSR2)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				_ = child.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	waitErr := child.Wait()
	close(done)
	signal.Stop(sigs)

	code = child.ProcessState.ExitCode()
	crashed := crashedChild(child.ProcessState, errs.Bytes())
	if crashed {
		if saved != nil {
			_ = term.Restore(stdin.Fd(), saved)
		}
		if fullScreen {
			_, _ = io.WriteString(stdout, terminalReset)
		}
	}
	if fullScreen {
		_, _ = stderr.Write(errs.Bytes())
	}
	if crashed {
		cleanAfter(child.Process.Pid, errs.Bytes(), stderr)
		if code < 0 { // killed by a signal
			if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			} else {
				code = 1
			}
		}
	}
	if waitErr != nil && code == 0 {
		code = 1
	}
	return code, true
}

// crashedChild reports whether the child died of a panic, a fatal runtime
// error or a signal it did not handle, rather than exiting.
func crashedChild(ps *os.ProcessState, stderr []byte) bool {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		// A reader that went away (learn demo | head) is not a crash.
		return ws.Signal() != syscall.SIGPIPE
	}
	// A panic, a fatal runtime error, or a goroutine dump on SIGQUIT or an
	// unexpected signal: Go prints the goroutines and exits with 2.
	return ps.ExitCode() == 2 && bytes.Contains(stderr, []byte("goroutine "))
}

// cleanAfter removes what a crashed child left, whose owner is now gone: its
// local cluster, its Docker container, and, when it used the database of
// --database-url or DATABASE_URL, its schema there (pgtemp.ReapAll).
func cleanAfter(pid int, stderrOf []byte, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var removed []string
	logf := func(format string, args ...any) { removed = append(removed, fmt.Sprintf(format, args...)) }
	// The child took its PostgreSQL options from the same command line
	// (main passes os.Args[1:] to supervise) and environment: pick its
	// --database-url and --postgres out from among the other flags.
	var g globals
	fs := newFlagSet("learn", &g)
	for rest := os.Args[1:]; len(rest) > 0; {
		_ = fs.Parse(rest) // an error is a flag of a command, not a global one
		if next := fs.Args(); len(next) < len(rest) {
			rest = next
		} else {
			rest = rest[1:] // the command, or an argument of it
		}
	}
	opts, err := g.pgOptions()
	if err != nil {
		opts = pgtemp.Options{DatabaseURL: g.databaseURL}
	}
	err = pgtemp.ReapAll(ctx, opts, logf)
	what := "crashed"
	if !bytes.Contains(stderrOf, []byte("goroutine ")) {
		what = "was killed"
	}
	fmt.Fprintf(stderr, "\nlearn %s (process %d); the terminal is restored", what, pid)
	if len(removed) > 0 {
		fmt.Fprintf(stderr, " and what it left is removed:\n")
		for _, r := range removed {
			fmt.Fprintf(stderr, "  %s\n", r)
		}
	} else {
		fmt.Fprintln(stderr, ".")
	}
	if err != nil {
		fmt.Fprintf(stderr, "learn: cleaning up after the crash: %v (learn doctor retries it)\n", err)
	}
	if bytes.Contains(stderrOf, []byte("panic: ")) {
		fmt.Fprintln(stderr, "Please report the panic above.")
	}
}

// injectCrash panics in a goroutine of its own after LEARN_CRASH_AFTER, when
// it is set: a crash no recover in learn can catch.
func injectCrash() {
	d, err := time.ParseDuration(os.Getenv(envCrashAfter))
	if err != nil {
		return
	}
	go func() {
		time.Sleep(d)
		panic(fmt.Sprintf("injected crash (%s=%s)", envCrashAfter, d))
	}()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = b.buf[over:]
	}
	return len(p), nil
}

// Bytes returns a copy of what is kept.
func (b *tailBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}
