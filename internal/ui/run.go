package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/term"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/supervisor"
	"github.com/learn-idempotency/learn/internal/ttyin"
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

// firstFrameTick is how long after the first window size the first frame
// is surely drawn: one tick of Bubble Tea's renderer at 60 frames a second.
const firstFrameTick = time.Second / 60

// SignalError is how Run ends when the learner quits with Ctrl-C (SIGINT:
// interrupted, whether the terminal sent the signal or the app read the
// key), or a SIGTERM or SIGHUP ends a learn still waiting in the background
// for the terminal: its ExitCode is 128 + the signal's number (130, 143,
// 129). A signal that ends ctx ends Run with ctx's cause.
type SignalError struct{ Signal syscall.Signal }

func (e *SignalError) Error() string { return supervisor.SignalWords(e.Signal) }

// ExitCode is 128 + the signal's number.
func (e *SignalError) ExitCode() int { return 128 + int(e.Signal) }

// Run runs the app in the terminal until the learner quits or ctx ends (the
// caller catches the signals: Ctrl-C, SIGTERM, SIGHUP, the terminal closing)
// and returns nil for a quit, a *SignalError for Ctrl-C, and ctx's cause
// when ctx ended. A learn started in the background (learn play &) waits,
// stopped like any job that wants the terminal, until it is brought to the
// foreground or a signal ends it. The throwaway PostgreSQL starts at once in
// the background; whatever way the app ends, every live run is stopped, the
// database removed, and where the learner was is saved.
func Run(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// PostgreSQL starts once the first frame is on its way to the screen
	// (the first window size has reached the app, which draws on the next
	// frame): the person sees the app at once, the database a moment later.
	firstFrame := make(chan struct{})
	db := live.LaunchAfter(cfg.Postgres, firstFrame)
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
	// The window's size, known now rather than when Bubble Tea reports it,
	// lets the first pages start their work (the lesson's rendering) while
	// the program sets the terminal up; the WindowSizeMsg brings the same.
	if out, ok := cfg.Out.(*os.File); ok {
		if w, h, err := term.GetSize(out.Fd()); err == nil && w > 0 && h > 0 {
			c.Width, c.Height = w, h
		}
	}
	m := New(c, cfg.First)
	if tty, ok := cfg.In.(*os.File); ok {
		if err := waitForeground(ctx, tty); err != nil {
			m.Close()
			return err
		}
	}
	// The caller handles the signals (ctx ends): the app quits through the
	// same empty last frame as q does. Ctrl-C read as a key while the
	// terminal is raw is the same interrupt as the signal.
	ctrlC, interrupted := false, false
	sized := false
	// The terminal's input reaches Bubble Tea's decoder through a guard
	// (ttyin): no sequence can panic it, no paste can take every key.
	opts := []tea.ProgramOption{tea.WithInput(ttyin.Wrap(cfg.In)), tea.WithOutput(cfg.Out), tea.WithoutSignalHandler()}
	if out, ok := cfg.Out.(*os.File); ok && out == os.Stdout {
		// lipgloss found the profile of this very terminal when the
		// program started (or learn's supervisor did): asking again runs
		// `tmux info` inside tmux, before the first frame.
		opts = append(opts, tea.WithColorProfile(lipgloss.Writer.Profile))
	}
	p := tea.NewProgram(m, append(opts,
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
			switch msg := msg.(type) {
			case tea.WindowSizeMsg:
				if !sized {
					sized = true
					go func() {
						// The renderer draws on its next tick (60 a second).
						time.Sleep(firstFrameTick)
						close(firstFrame)
					}()
				}
			case tea.KeyPressMsg:
				ctrlC = msg.String() == "ctrl+c"
			case tea.QuitMsg:
				interrupted = ctrlC
				m.Quitting()
			}
			return msg
		}))...)
	go func() {
		<-ctx.Done()
		p.Quit()
	}()

	_, runErr := p.Run()
	if !sized {
		close(firstFrame) // the program ended before it had a size
	}
	m.Close()
	runs.Close()
	if err := m.SaveOnExit(); err != nil && cfg.Errors != nil {
		fmt.Fprintln(cfg.Errors, "learn: saving where you left off:", err)
	}
	if err := db.Close(); err != nil && cfg.Errors != nil {
		fmt.Fprintln(cfg.Errors, "learn: stopping PostgreSQL:", err)
	}
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case interrupted:
		return &SignalError{Signal: syscall.SIGINT}
	case runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled):
		return runErr
	}
	return nil
}
