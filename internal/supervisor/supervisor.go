// Package supervisor runs learn in a child process and cleans up after it
// when it crashes.
//
// A panic in any goroutine ends a Go program at once: no deferred cleanup
// runs, the terminal stays in raw mode on the alternate screen, and the
// throwaway PostgreSQL (a cluster, a container, or a schema in the user's
// database) stays behind. So learn runs its work in a child process and
// watches it. The protocol between the two, in one place:
//
//   - The child. The parent starts its own executable again with the same
//     arguments and environment, plus LEARN_SUPERVISED=1 (EnvChild), which
//     marks the child: IsChild is true there, and the child does the work
//     itself instead of supervising. Standard input and output are the
//     parent's own files, so the child talks to the terminal directly. On
//     Linux the kernel sends the child SIGTERM if the parent dies
//     (PR_SET_PDEATHSIG), and the child quits as on any SIGTERM.
//   - Signals. The parent relays SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT,
//     SIGSEGV, SIGBUS, SIGUSR1 and SIGUSR2 to the child and otherwise only
//     waits: the child cleans up and exits with its code (130 for SIGINT,
//     143 for SIGTERM, 129 for SIGHUP), or, for SIGQUIT and the like,
//     crashes as the sender meant and the parent cleans up.
//   - Job control. For a full-screen child the parent catches SIGTSTP and
//     stops only after the child has given the terminal back and said so
//     on a pipe (fd 3, EnvJobs): the parent stops the child, restores the
//     terminal's mode and stops itself; fg continues both (jobs_unix.go
//     says why in this order). Other children stop with the parent as any
//     job does.
//   - Standard error. The child's goes through to the parent's as it is
//     written (learn serve's log), except for a full-screen child (the app,
//     Config.FullScreen, at a terminal): then it is held and written once the
//     child has ended and the terminal is back, so that it is not drawn
//     over. The parent keeps the last MiB of it in any case, to tell a crash.
//   - Crash detection. The child crashed when it died of a signal other
//     than SIGPIPE (a reader that went away, as in learn demo | head, is no
//     crash) and other than SIGINT, SIGTERM and SIGHUP, or exited with code
//     2 after printing a goroutine dump (a panic, a fatal runtime error, or
//     SIGQUIT). Any other exit is the child's own answer and is passed on.
//   - A person's signal. learn catches SIGINT, SIGTERM and SIGHUP from the
//     first line of its main; a child that died of one of them all the same
//     got it before that (while the runtime started). That is an interrupt,
//     not a crash: the parent restores the terminal, calls Config.Reap, and
//     says "learn: interrupted" ("terminated", "hangup"), as learn says it
//     everywhere.
//   - After a crash. The parent puts the terminal back in the mode it had
//     before the child started (term.Restore, with SIGTTOU ignored so that
//     a learn now in the background does not stop in the attempt) and, for
//     a full-screen child, resets every mode a full-screen program may turn
//     on (terminalReset: the alternate screen, the cursor, mouse reports,
//     bracketed paste, focus reports, the keyboard modes modifyOtherKeys,
//     win32-input and kitty, and more). Then it calls Config.Reap, which
//     in learn is pgtemp.ReapAll: every cluster, container and schema learn
//     makes carries an owner record with the pid of the process that made
//     it, the child's, so once the child is gone they are found by that pid
//     and removed, as a later learn or learn doctor would. It reports what
//     it removed on standard error after "learn crashed (process PID)" (or
//     "learn was killed", when there was no goroutine dump), adding "the
//     terminal is restored" only when it restored one (a full-screen
//     child), and asks for a report of a panic.
//   - Exit codes. The parent exits with the child's code; a child killed by
//     a signal gives 128 + the signal's number (137 for SIGKILL, 141 for
//     SIGPIPE); a failure to wait for the child gives 1.
//
// When the child cannot be started (no executable path, a failed fork) Run
// says so and learn runs in the one process, unsupervised.
package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/tailbuf"
)

// EnvChild marks the supervised child process: the parent sets it to "1".
const EnvChild = "LEARN_SUPERVISED"

// EnvFirstFrameFD names, in the child's environment, the file descriptor
// whose end says that the parent's first frame is on the screen
// (AwaitFirstFrame).
const EnvFirstFrameFD = "LEARN_FIRST_FRAME_FD"

// EnvCrashAfter makes InjectCrash panic after the duration it holds (e.g.
// "2500ms"): the fault injection of the crash tests, in a build with the
// learnfaults tag only (a release build ignores it).
const EnvCrashAfter = "LEARN_CRASH_AFTER"

// EnvSlowStart makes InjectSlowStart wait the duration it holds before the
// child goes on: a slow start (a loaded machine, a cold disk), for the
// first-frame tests, in a build with the learnfaults tag only.
const EnvSlowStart = "LEARN_SLOW_START"

// terminalReset undoes whatever a full-screen program may have turned on,
// whether learn's app uses it today or not: the alternate screen, a hidden
// cursor and its shape, every mouse mode and encoding, focus reports,
// bracketed paste, synchronized output, grapheme clustering, light/dark and
// in-band resize reports, application cursor keys and keypad, the keyboard
// modes (xterm's modifyOtherKeys, Windows' win32-input and every level of
// the kitty keyboard protocol), and any text style. A shell after a crash
// then gets keys as it expects them (Ctrl-Enter is no ^[[13;5u).
//
// Each mode is reset by a sequence of its own: terminals cap the
// parameters of one sequence (tmux 3.3 drops a DECRST whose parameters
// pass 64 bytes, and every mode in it with it), so one sequence for all
// seventeen left the mouse on after a crash.
var terminalReset = ansi.ResetModeAltScreenSaveCursor + ansi.ShowCursor + "\x1b[0 q" +
	resetEach(ansi.ModeMouseX10, ansi.ModeMouseNormal, ansi.ModeMouseHighlight, ansi.ModeMouseButtonEvent,
		ansi.ModeMouseAnyEvent, ansi.ModeMouseExtUtf8, ansi.ModeMouseExtSgr, ansi.ModeMouseExtUrxvt,
		ansi.ModeMouseExtSgrPixel, ansi.ModeFocusEvent, ansi.ModeBracketedPaste, ansi.ModeSynchronizedOutput,
		ansi.ModeUnicodeCore, ansi.ModeLightDark, ansi.ModeInBandResize, ansi.ModeWin32Input, ansi.ModeCursorKeys) +
	"\x1b>" + // numeric keypad (DECKPNM)
	ansi.ResetModifyOtherKeys + "\x1b[>4;0m" +
	ansi.PopKittyKeyboard(64) + ansi.KittyKeyboard(0, 1) +
	ansi.ResetStyle

// resetEach resets each of modes with a sequence of its own (DECRST or RM).
func resetEach(modes ...ansi.Mode) string {
	var b strings.Builder
	for _, m := range modes {
		b.WriteString(ansi.ResetMode(m))
	}
	return b.String()
}

// leaveFirstFrame takes down the parent's first frame: the alternate screen
// and the hidden cursor.
var leaveFirstFrame = ansi.ResetModeAltScreenSaveCursor + ansi.ShowCursor

// maxStderr bounds what the parent keeps of the child's standard error.
const maxStderr = 1 << 20

// reapTimeout bounds Config.Reap after a crash.
const reapTimeout = 20 * time.Second

// forwarded are the signals the parent relays to the child.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT,
	syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGUSR1, syscall.SIGUSR2}

// Config says which child to run and how to clean up after it.
type Config struct {
	// Path is the program to run as the child; "" means this process's own
	// executable (os.Executable).
	Path string
	// Args are the child's arguments, without the program's name.
	Args []string
	// Env is the child's environment (EnvChild is added); nil means this
	// process's own.
	Env []string
	// Stdin, Stdout and Stderr are the parent's; the child gets Stdin and
	// Stdout as they are.
	Stdin, Stdout, Stderr *os.File
	// FullScreen says the child takes over the terminal (learn's app). It
	// counts only when Stdin and Stdout are terminals.
	FullScreen bool
	// FirstFrame, when set, draws the full-screen child's first frame from
	// the parent, on the alternate screen, before the child starts: the
	// person sees the app without waiting for a second start of the
	// program, and the child draws the same screen over it. It is called
	// only for a full-screen child in the terminal's foreground; it
	// returns whether it drew.
	FirstFrame func(w io.Writer) bool
	// Reap removes what a crashed child left and calls logf once for each
	// thing removed; its error is reported, not returned. It gets at most
	// 20 s. Nil reaps nothing.
	Reap func(ctx context.Context, logf func(format string, args ...any)) error
}

// AwaitFirstFrame returns once the parent's first frame is on the screen,
// in a child the parent starts while it draws (EnvFirstFrameFD); at once
// anywhere else. The child calls it before it takes the terminal: its own
// first frame must come after the parent's, never under it. A parent that
// ends meanwhile ends the wait too.
func AwaitFirstFrame() {
	fd, err := strconv.Atoi(os.Getenv(EnvFirstFrameFD))
	if err != nil || fd < 3 {
		return
	}
	_ = os.Unsetenv(EnvFirstFrameFD)
	f := os.NewFile(uintptr(fd), "first frame")
	_, _ = io.Copy(io.Discard, f)
	_ = f.Close()
}

// IsChild reports whether this process is the supervised child (EnvChild is
// set).
func IsChild() bool { return os.Getenv(EnvChild) != "" }

// Run runs the child cfg describes, waits for it, cleans up after a crash
// (see the package doc) and returns the exit code for the parent. ok is
// false, and nothing was started, when this process should do the work
// itself instead: it is the child already, or the child cannot be started.
func Run(cfg Config) (code int, ok bool) {
	if IsChild() {
		return 0, false
	}
	path := cfg.Path
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return 0, false
		}
		path = exe
	}
	fullScreen := cfg.FullScreen && isTerminal(cfg.Stdin) && isTerminal(cfg.Stdout)
	var saved *term.State
	if isTerminal(cfg.Stdin) {
		saved, _ = term.GetState(cfg.Stdin.Fd())
	}

	child := exec.Command(path, cfg.Args...)
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	child.Env = append(env, EnvChild+"=1")
	child.Stdin, child.Stdout = cfg.Stdin, cfg.Stdout
	child.SysProcAttr = childAttr()
	errs := tailbuf.New(maxStderr)
	if fullScreen {
		child.Stderr = errs
	} else {
		child.Stderr = &relay{to: cfg.Stderr, keep: errs}
	}

	// Relay from before the start, so that no signal meant for the child
	// ends the parent in between.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	var jobs *parentJobs
	if fullScreen {
		jobs = startJobs(child)
	}
	// The child starts before the first frame is drawn, so that its start
	// (a second start of the program, package initialisation and all)
	// runs while the parent draws; it waits on the pipe's end
	// (AwaitFirstFrame) before it takes the terminal, so its own frame
	// never goes under the parent's. Without a pipe (no descriptor left)
	// the parent draws first, as before.
	draws := fullScreen && saved != nil && cfg.FirstFrame != nil && foreground(cfg.Stdin)
	var drawn, pending *os.File // the pipe's ends: the parent's closed once the first frame is drawn
	drew := false
	if draws {
		if r, w, err := os.Pipe(); err == nil {
			child.ExtraFiles = append(child.ExtraFiles, r)
			child.Env = append(child.Env, EnvFirstFrameFD+"="+strconv.Itoa(3+len(child.ExtraFiles)-1))
			drawn, pending = w, r
		} else {
			drew = firstFrame(cfg, saved)
		}
	}
	if err := child.Start(); err != nil {
		if drawn != nil {
			pending.Close()
			drawn.Close()
		}
		if jobs != nil {
			go jobs.run(cfg, saved, drew, nil) // ends at once: the child's end is closed
			jobs.close()
		}
		if drew {
			_ = term.Restore(cfg.Stdin.Fd(), saved)
			_, _ = io.WriteString(cfg.Stdout, leaveFirstFrame)
		}
		return 0, false
	}
	if drawn != nil {
		pending.Close()
		drew = firstFrame(cfg, saved)
		drawn.Close()
	}
	if jobs != nil {
		go jobs.run(cfg, saved, drew, child.Process)
	}
	done := make(chan struct{})
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
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
	<-relayed
	if jobs != nil {
		jobs.close()
	}

	stderrOf := errs.Bytes()
	crashed := crashedChild(child.ProcessState, stderrOf)
	early := endedEarly(child.ProcessState)
	switch {
	case crashed || early != 0:
		restoreTerminal(cfg, saved, fullScreen)
	case drew && foreground(cfg.Stdin):
		// The child took the terminal as the parent had left it, raw, and
		// gave it back so; or it ended before it took the screen over (an
		// error of its command line). Either way the parent's mode and
		// frame must not stay. Leaving the alternate screen twice changes
		// nothing. (A child that ended while suspended, kill %1, had given
		// the terminal back already: in the background the shell has it.)
		_ = term.Restore(cfg.Stdin.Fd(), saved)
		_, _ = io.WriteString(cfg.Stdout, leaveFirstFrame)
	}
	if fullScreen {
		_, _ = cfg.Stderr.Write(stderrOf)
	}
	switch {
	case crashed:
		cleanAfter(child.Process.Pid, stderrOf, fullScreen, cfg.Reap, cfg.Stderr)
	case early != 0:
		// Ctrl-C, SIGTERM or SIGHUP came before the child could catch it
		// (learn catches them from the first line of main): an interrupt,
		// not a crash, said in the same words as everywhere.
		removed, err := reapAfter(cfg.Reap)
		fmt.Fprintf(cfg.Stderr, "learn: %s\n", exit.Words(early))
		for _, r := range removed {
			fmt.Fprintf(cfg.Stderr, "  %s\n", r)
		}
		if err != nil {
			fmt.Fprintf(cfg.Stderr, "learn: cleaning up: %v (learn doctor retries it)\n", err)
		}
	}
	return exitCode(child.ProcessState, waitErr), true
}

// firstFrame puts the terminal in raw mode and draws cfg.FirstFrame: keys
// pressed before the child reads them wait unechoed and unchanged (Enter
// stays Enter, Ctrl-C reaches the app as a key), as they would in the
// child's own raw mode. It reports whether it drew; when it did not, the
// terminal is as it was.
// A FirstFrame that panics counts as one that did not draw: the child
// still starts and draws its own.
func firstFrame(cfg Config, saved *term.State) (drew bool) {
	if _, err := term.MakeRaw(cfg.Stdin.Fd()); err != nil {
		return false
	}
	defer func() {
		if r := recover(); r != nil {
			drew = false
			_, _ = io.WriteString(cfg.Stdout, leaveFirstFrame)
		}
		if !drew {
			_ = term.Restore(cfg.Stdin.Fd(), saved)
		}
	}()
	return cfg.FirstFrame(cfg.Stdout)
}

// restoreTerminal puts the terminal back as it was before the child
// started, and for a full-screen child resets every mode it may have
// turned on (terminalReset). SIGTTOU is ignored first: a learn that is now
// in the background (Ctrl-Z, bg) still restores the terminal instead of
// stopping in the attempt.
func restoreTerminal(cfg Config, saved *term.State, fullScreen bool) {
	signal.Ignore(syscall.SIGTTOU)
	if saved != nil {
		_ = term.Restore(cfg.Stdin.Fd(), saved)
	}
	if fullScreen {
		_, _ = io.WriteString(cfg.Stdout, terminalReset)
	}
}

// endedEarly returns the signal that ended the child when it is one a
// person sends to stop learn (SIGINT, SIGTERM, SIGHUP), else 0.
func endedEarly(ps *os.ProcessState) syscall.Signal {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0
	}
	switch sig := ws.Signal(); sig {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP:
		return sig
	}
	return 0
}

// exitCode is the code the parent exits with for a child that ended as ps
// says: its own code, or 128 + the signal that killed it.
func exitCode(ps *os.ProcessState, waitErr error) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	code := ps.ExitCode()
	if code < 0 || (waitErr != nil && code == 0) {
		return 1
	}
	return code
}

// crashedChild reports whether the child died of a panic, a fatal runtime
// error or a signal it did not handle, rather than exiting.
func crashedChild(ps *os.ProcessState, stderr []byte) bool {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		// A reader that went away (learn demo | head) is not a crash, nor
		// is a person's Ctrl-C, SIGTERM or SIGHUP (endedEarly).
		return ws.Signal() != syscall.SIGPIPE && endedEarly(ps) == 0
	}
	// A panic, a fatal runtime error, or a goroutine dump on SIGQUIT or an
	// unexpected signal: Go prints the goroutines and exits with 2.
	return ps.ExitCode() == 2 && bytes.Contains(stderr, []byte("goroutine "))
}

// reapAfter runs reap, if any, within reapTimeout and returns what it
// removed.
func reapAfter(reap func(context.Context, func(string, ...any)) error) (removed []string, err error) {
	if reap == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), reapTimeout)
	defer cancel()
	err = reap(ctx, func(format string, args ...any) { removed = append(removed, fmt.Sprintf(format, args...)) })
	return removed, err
}

// cleanAfter removes what the crashed child pid left (reap) and tells the
// person at stderr what happened and what was removed; it speaks of the
// terminal only when it restored one (a full-screen child).
func cleanAfter(pid int, stderrOf []byte, fullScreen bool, reap func(context.Context, func(string, ...any)) error, stderr io.Writer) {
	removed, err := reapAfter(reap)
	what := "crashed"
	if !bytes.Contains(stderrOf, []byte("goroutine ")) {
		what = "was killed"
	}
	fmt.Fprintf(stderr, "\nlearn %s (process %d)", what, pid)
	if fullScreen {
		fmt.Fprint(stderr, "; the terminal is restored")
	}
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

// crashAfter panics in a goroutine of its own after d: a crash no recover
// in learn can catch, for the crash tests (InjectCrash, in a build with the
// learnfaults tag).
func crashAfter(d time.Duration, why string) {
	go func() {
		time.Sleep(d)
		panic("injected crash (" + why + ")")
	}()
}

func isTerminal(f *os.File) bool { return f != nil && term.IsTerminal(f.Fd()) }

// relay passes what the child writes to its standard error on to the
// parent's and keeps its tail. A standard error nobody reads any more
// (learn serve 2>&1 | grep, grep gone) takes every write all the same:
// the child must never fail, nor block, on its log, and the tail still
// shows a panic to the crash report.
type relay struct {
	to     io.Writer
	keep   *tailbuf.Buffer
	broken bool // to failed once: the rest is kept only
}

func (r *relay) Write(p []byte) (int, error) {
	_, _ = r.keep.Write(p)
	if !r.broken {
		if _, err := r.to.Write(p); err != nil {
			r.broken = true
		}
	}
	return len(p), nil
}
