//go:build unix

package ui

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"golang.org/x/sys/unix"

	"github.com/learn-idempotency/learn/internal/exit"
)

// waitForeground returns at once when tty is no terminal or this process's
// group is the terminal's foreground group. Otherwise learn was started in
// the background (learn play &): changing the terminal's modes now would
// stop it on SIGTTOU inside the change, where a SIGTERM could never end it.
// So it stops itself the same way, before touching the terminal, as any
// job that wants the terminal does (the shell says "Stopped (tty output)"),
// and checks again when continued (fg). A SIGTERM, SIGINT or SIGHUP, or ctx
// ending, ends the wait with a exit.Signalled or ctx's cause: kill %1 ends
// the job, as it ends less.
//
// It stops itself once only. The shell's kill %1 sends SIGTERM, then
// SIGCONT, and the two may reach this process in either order; a second
// stop on the SIGCONT could come before the SIGTERM is seen. Continued
// but still in the background (bg, or the SIGCONT of a kill), it waits
// running, looking at the terminal's foreground group every
// foregroundPoll (fg sends a running job no signal).
func waitForeground(ctx context.Context, tty *os.File) error {
	fd := int(tty.Fd())
	if !term.IsTerminal(tty.Fd()) {
		return nil
	}
	// One channel for all: the shell's kill %1 sends SIGTERM before
	// SIGCONT, and they arrive here in that order.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGCONT, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var poll <-chan time.Time
	for stopped := false; ; {
		fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		if err != nil || fg == unix.Getpgrp() {
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if !stopped {
			stopped = true
			_ = unix.Kill(0, syscall.SIGTTOU)
		} else if poll == nil {
			t := time.NewTicker(foregroundPoll)
			defer t.Stop()
			poll = t.C
		}
		select {
		case sig := <-sigs:
			if sig != syscall.SIGCONT {
				return exit.Signalled(sig.(syscall.Signal))
			}
		case <-poll:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// foregroundPoll is how often a learn continued in the background looks
// whether it has been brought to the foreground.
const foregroundPoll = 100 * time.Millisecond
