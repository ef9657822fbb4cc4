//go:build unix

package supervisor

import (
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"github.com/charmbracelet/x/term"
)

// Job control (Ctrl+Z, kill -TSTP %1, fg) of a full-screen child. The
// shell waits for its own child, the parent: the job is stopped, and the
// shell takes the terminal back, as soon as the parent stops. The child
// must give the terminal back first (leave the alternate screen, restore
// its modes), else the shell's prompt lands on the app's screen, and the
// child, stopped in the middle of it by SIGTTOU, finishes after fg and
// leaves the terminal in line mode. So:
//
//   - The parent catches SIGTSTP and does not stop on it; the child is in
//     the same process group and gets the same signal.
//   - The child (SuspendHandler, Suspend) gives the terminal back, says
//     what happened, and writes one byte to the pipe the parent gave it
//     (fd 3, named by EnvJobs): stoppingApp, or stoppingBeforeApp when the
//     app has not taken the terminal yet (the parent's first frame is still
//     up); then it waits for SIGCONT.
//   - On that byte the parent stops the child (SIGSTOP), puts the terminal
//     in the mode it had before the child started (the child's own
//     "before" may be the parent's raw first frame), takes its first frame
//     down if the app had not, and stops itself: the
//     shell says Stopped. The parent stops the child rather than the child
//     itself: a child that stopped itself after its byte could, on a busy
//     machine, stop only after fg had sent its SIGCONT, and stay stopped.
//     A SIGSTOP still pending when SIGCONT comes is dropped by the kernel.
//   - fg continues both; the child, told by its SIGCONT, takes the
//     terminal again (raw mode, a full redraw).
//
// A learn started by a shell without job control (SIGTSTP ignored) does
// not suspend: CanSuspend is false and the app says why.

// EnvJobs names, in the child, the file descriptor of the pipe to the
// parent on which the child says it is stopping.
const EnvJobs = "LEARN_JOBS"

// jobsFd is the pipe's descriptor in the child: the first of ExtraFiles.
const jobsFd = 3

// parentJobs is the parent's side of a full-screen child's job control.
type parentJobs struct {
	r    *os.File
	w    *os.File // the child's end, closed in the parent once it started
	tstp chan os.Signal
	done chan struct{}
}

// startJobs prepares child for job control when learn may be suspended
// here (SIGTSTP was not ignored when it started) and returns nil when not.
func startJobs(child *exec.Cmd) *parentJobs {
	if signal.Ignored(syscall.SIGTSTP) {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	child.ExtraFiles = append(child.ExtraFiles, w)
	child.Env = append(child.Env, EnvJobs+"="+strconv.Itoa(jobsFd+len(child.ExtraFiles)-1))
	j := &parentJobs{r: r, w: w, tstp: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(j.tstp, syscall.SIGTSTP)
	return j
}

// run follows the child's stops until the pipe closes (the child has
// ended): each time the child says it has given the terminal back, the
// parent stops it, restores the terminal (when it is in the terminal's
// foreground) and stops itself, until fg.
func (j *parentJobs) run(cfg Config, saved *term.State, drew bool, child *os.Process) {
	defer close(j.done)
	_ = j.w.Close()
	go func() { // SIGTSTP is the child's to act on
		for range j.tstp {
		}
	}()
	var b [1]byte
	for {
		if _, err := j.r.Read(b[:]); err != nil {
			return
		}
		if child != nil {
			_ = child.Signal(syscall.SIGSTOP)
		}
		if saved != nil && foreground(cfg.Stdin) {
			_ = term.Restore(cfg.Stdin.Fd(), saved)
			if b[0] == stoppingBeforeApp && drew {
				// The app had not taken the screen yet: the parent's
				// first frame is still up.
				_, _ = io.WriteString(cfg.Stdout, leaveFirstFrame)
			}
		}
		stopSelf()
	}
}

// What the child writes on the pipe when it is about to be stopped.
const (
	stoppingApp       = 'z' // the app gave the terminal back
	stoppingBeforeApp = 'f' // the app had not started: the terminal is as the parent left it
)

// close ends the job control once the child has ended.
func (j *parentJobs) close() {
	_ = j.r.Close()
	<-j.done
	signal.Stop(j.tstp)
	close(j.tstp)
}

// stopSelf stops this process, as a job stops on Ctrl+Z, and returns once
// it is continued. It stops with SIGSTOP: once os/signal has caught
// SIGTSTP, the Go runtime keeps its handler after signal.Stop or Reset,
// and that handler drops a SIGTSTP no channel wants (runtime/signal_unix.go,
// sigdisable): the process would never stop. The shell says "Stopped
// (signal)".
func stopSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGSTOP) }

// The child's side.
var childJobs struct {
	once    sync.Once
	pipe    *os.File // to the parent; nil when unsupervised
	can     bool
	tstp    chan os.Signal
	mu      sync.Mutex
	handler func()
	app     bool // a handler was set once: the app has taken the terminal
}

// initChildJobs finds the pipe to the parent, if any, and catches SIGTSTP
// from then on: a SIGTSTP goes to the handler SuspendHandler set or, with
// none, stops the process at once (Suspend). It runs once.
func initChildJobs() {
	cj := &childJobs
	cj.once.Do(func() {
		switch {
		case IsChild():
			fd, err := strconv.Atoi(os.Getenv(EnvJobs))
			if err != nil || fd < jobsFd {
				return // no job control: SIGTSTP acts as it always does
			}
			syscall.CloseOnExec(fd) // not for learn's own children (PostgreSQL)
			cj.pipe = os.NewFile(uintptr(fd), "learn-jobs")
		case signal.Ignored(syscall.SIGTSTP):
			return // a shell without job control
		}
		cj.can = true
		cj.tstp = make(chan os.Signal, 1)
		signal.Notify(cj.tstp, syscall.SIGTSTP)
		go func() {
			for range cj.tstp {
				cj.mu.Lock()
				h := cj.handler
				cj.mu.Unlock()
				if h != nil {
					h()
				} else {
					Suspend(context.Background())
				}
			}
		}()
	})
}

// HandleJobControl catches SIGTSTP in learn's process from now on (the
// child, or learn unsupervised): with no handler set (SuspendHandler), a
// SIGTSTP stops the process at once, telling the parent first. Call it
// early in main.
func HandleJobControl() { initChildJobs() }

// CanSuspend reports whether this process can be suspended as a job:
// HandleJobControl ran, and the shell has job control.
func CanSuspend() bool {
	initChildJobs()
	return childJobs.can
}

// SuspendHandler makes f what a SIGTSTP does (nil: stop at once): the app
// gives the terminal back, then calls Suspend. f runs in a goroutine of its
// own and must not block for long.
func SuspendHandler(f func()) {
	initChildJobs()
	childJobs.mu.Lock()
	childJobs.handler = f
	childJobs.app = childJobs.app || f != nil
	childJobs.mu.Unlock()
}

// Suspend stops this process as a job stops on Ctrl+Z, once the caller has
// given the terminal back: supervised, it tells the parent, which stops
// this process and then itself (the shell says Stopped); unsupervised, it
// stops itself. It returns true once continued (fg, bg: the caller checks
// it has the terminal's foreground before it takes the terminal again),
// and false when it could not suspend (CanSuspend), when ctx ended, or when
// a signal to end learn came (SIGTERM, SIGINT, SIGHUP): kill %1 sends
// SIGTERM, then SIGCONT, and the caller must then end without taking the
// terminal, which the shell has.
func Suspend(ctx context.Context) bool {
	if !CanSuspend() {
		return false
	}
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	end := make(chan os.Signal, 1)
	signal.Notify(end, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(end)
	cj := &childJobs
	if cj.pipe != nil {
		cj.mu.Lock()
		b := byte(stoppingBeforeApp)
		if cj.app {
			b = stoppingApp
		}
		cj.mu.Unlock()
		if _, err := cj.pipe.Write([]byte{b}); err != nil {
			return false // the parent is gone: nobody would stop the job
		}
	} else {
		stopSelf()
	}
	select {
	case <-cont:
	case <-end:
		return false
	case <-ctx.Done():
		return false
	}
	// The kernel hands over the lower signal first: a SIGTERM sent before
	// the SIGCONT is here by now.
	select {
	case <-end:
		return false
	default:
		return ctx.Err() == nil
	}
}
