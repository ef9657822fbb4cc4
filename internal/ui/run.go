package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
	"github.com/learn-idempotency/learn/pgtemp"
)

// Config is how the app starts in the local terminal.
type Config struct {
	// First is the page to open on top of the home page (zero: the home
	// page, whose first entry offers where the learner left off).
	First common.Open
	// Theme is "dark" or "light".
	Theme string
	// Present starts in presenter mode.
	Present bool
	// Postgres says how to get the throwaway PostgreSQL, started in the
	// background at once.
	Postgres pgtemp.Options
	// In and Out are the terminal.
	In  io.Reader
	Out io.Writer
	// Errors receives what the app has to say after it has left the
	// screen (a progress file that could not be saved).
	Errors io.Writer
}

// SignalError is how Run ends on a signal (Ctrl-C, SIGTERM, SIGHUP, the
// terminal closing): its ExitCode is 128 + the signal's number (130, 143,
// 129).
type SignalError struct{ Signal syscall.Signal }

func (e *SignalError) Error() string {
	switch e.Signal {
	case syscall.SIGINT:
		return "interrupted"
	case syscall.SIGTERM:
		return "terminated"
	}
	return e.Signal.String()
}

// ExitCode is 128 + the signal's number.
func (e *SignalError) ExitCode() int { return 128 + int(e.Signal) }

// Run runs the app in the terminal until the learner quits or a signal
// comes (*SignalError). The throwaway PostgreSQL starts at once in the
// background; whatever way the app ends, every live run is stopped, the
// database removed, and where the learner was is saved.
func Run(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	db := live.Launch(cfg.Postgres)
	defer db.Close()
	runs := live.NewRuns(ctx, db)
	defer runs.Close()
	c := &common.Common{
		Ctx: ctx, Styles: common.NewStyles(cfg.Theme != "light"), Keys: common.NewKeyMap(),
		Theme: cfg.Theme, DocStyle: markdown.Style(cfg.Theme, false),
		DB: db, Runs: runs, Progress: common.LoadProgress(), Docs: &common.Docs{},
	}
	if cfg.Present {
		c.Present, c.PresentSince = true, time.Now()
	}
	m := New(c, cfg.First)
	// learn handles the signals itself, to quit through the same empty last
	// frame as q does and to exit with the conventional code.
	p := tea.NewProgram(m, tea.WithInput(cfg.In), tea.WithOutput(cfg.Out), tea.WithoutSignalHandler(),
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
			if _, ok := msg.(tea.QuitMsg); ok {
				m.Quitting()
			}
			return msg
		}))
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var caught atomic.Value
	go func() {
		select {
		case sig := <-sigs:
			caught.Store(sig)
			p.Quit()
		case <-ctx.Done():
		}
	}()

	_, runErr := p.Run()
	m.Close()
	runs.Close()
	if err := m.SaveOnExit(); err != nil && cfg.Errors != nil {
		fmt.Fprintln(cfg.Errors, "learn: saving where you left off:", err)
	}
	if err := db.Close(); err != nil && cfg.Errors != nil {
		fmt.Fprintln(cfg.Errors, "learn: stopping PostgreSQL:", err)
	}
	if sig, ok := caught.Load().(syscall.Signal); ok {
		return &SignalError{Signal: sig}
	}
	if runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled) {
		return runErr
	}
	return nil
}
