package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/term"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/supervisor"
	"github.com/learn-idempotency/learn/internal/ttyin"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
	"github.com/learn-idempotency/learn/internal/ui/pages/reader"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
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
	// ExercisesDir is the directory of learn exercises' module; "" is
	// ExercisesDirFor's.
	ExercisesDir string
}

// DefaultExercisesDir is where the exercises' module is written, unless
// told.
const DefaultExercisesDir = "learn-exercises"

// ExercisesDirFor is the exercises' module the app opens when given no
// directory, run in cwd: cwd itself when it is one (it holds learn's
// harness: ./learn-exercises in it would be a module in a module), else
// ./learn-exercises when that is one, else remembered (the one last
// opened, an absolute path saved with the progress) while it still is
// one, else ./learn-exercises, to be written there.
func ExercisesDirFor(cwd, remembered string) string {
	switch {
	case cwd != "" && exercises.IsModule(cwd):
		return cwd
	case exercises.IsModule(filepath.Join(cwd, DefaultExercisesDir)):
		return DefaultExercisesDir
	case filepath.IsAbs(remembered) && exercises.IsModule(remembered):
		return remembered
	}
	return DefaultExercisesDir
}

// appGCPercent is the app's garbage collection target (GOGC) unless GOGC
// is set: the app's heap is mostly each frame's garbage (a page wrapped
// again for the viewport), so half Go's default keeps reading the lesson
// under its memory target, for collections twice as often (BENCHMARKS.md
// has both figures). Only the app's process sets it; learn
// serve, demo and the workshop keep Go's default.
const appGCPercent = 50

// AppGC sets the app's process's garbage collection target, appGCPercent,
// unless GOGC is set. The app's process calls it before Run; no other
// process of learn does.
func AppGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(appGCPercent)
	}
}

// firstFrameTick is how long after the first window size the first frame
// is surely drawn: one tick of Bubble Tea's renderer at 60 frames a second.
const firstFrameTick = time.Second / 60

// Run runs the app in the terminal until the learner quits or ctx ends (the
// caller catches the signals: Ctrl-C, SIGTERM, SIGHUP, the terminal closing)
// and returns nil for a quit, an exit.Signalled for Ctrl-C (SIGINT:
// interrupted, whether the terminal sent the signal or the app read the
// key; or a SIGTERM or SIGHUP that ends a learn still waiting in the
// background for the terminal), and ctx's cause
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
			c.Width, c.Height = common.CapSize(w, h)
		}
	}
	c.Suspendable = supervisor.CanSuspend()
	c.ExercisesDir = cfg.ExercisesDir
	if c.ExercisesDir == "" {
		cwd, _ := os.Getwd()
		c.ExercisesDir = ExercisesDirFor(cwd, c.Progress.Get().ExercisesDir)
	}
	if cfg.First.Page == progress.PageReader && c.Width > 0 {
		// The page is rendered before the first frame, as the supervisor's
		// preview drew it: a frame saying "rendering…" would replace the
		// preview's page for as long as a render in the background takes.
		if p, err := lessons.Get(cfg.First.Name); err == nil {
			k := common.DocKey{Slug: p.Slug, Width: reader.WrapWidth(c.Width), Style: c.DocStyle}
			if out, err := markdown.Body(p, k.Width, k.Style); err == nil {
				c.Docs.Put(k, out)
			}
		}
	}
	m := New(c, cfg.First)
	// Learn's supervisor draws the first frame while this process starts:
	// the app takes the terminal once it is there.
	supervisor.AwaitFirstFrame()
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
	in := ttyin.Wrap(cfg.In)
	opts := []tea.ProgramOption{tea.WithInput(in), tea.WithOutput(cfg.Out), tea.WithoutSignalHandler()}
	if out, ok := cfg.Out.(*os.File); ok && out == os.Stdout {
		// lipgloss found the profile of this very terminal when the
		// program started (or learn's supervisor did): asking again runs
		// `tmux info` inside tmux, before the first frame.
		opts = append(opts, tea.WithColorProfile(lipgloss.Writer.Profile))
	}
	var p *tea.Program
	p = tea.NewProgram(m, append(opts,
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
			switch msg := msg.(type) {
			case tea.WindowSizeMsg:
				// The app draws at most MaxWidth x MaxHeight, as in a
				// workshop: a larger window is drawn in its top left.
				msg.Width, msg.Height = common.CapSize(msg.Width, msg.Height)
				if !sized {
					sized = true
					go func() {
						// The renderer draws on its next tick (60 a second).
						time.Sleep(firstFrameTick)
						close(firstFrame)
					}()
				}
				return msg
			case tea.KeyPressMsg:
				ctrlC = msg.String() == "ctrl+c"
				if msg.String() == "ctrl+z" {
					return suspend(ctx, p, in, cfg.Out, db)
				}
			case suspendMsg:
				return suspend(ctx, p, in, cfg.Out, db)
			case tea.QuitMsg:
				interrupted = ctrlC
				m.Quitting()
			}
			return msg
		}))...)
	// SIGTSTP (kill -TSTP %1, or Ctrl+Z while the terminal is not raw)
	// suspends the app the same way as Ctrl+Z does.
	supervisor.SuspendHandler(func() { p.Send(suspendMsg{}) })
	defer supervisor.SuspendHandler(nil)
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
		return exit.Signalled(syscall.SIGINT)
	case runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled):
		return runErr
	}
	return nil
}

// suspendMsg asks the app to suspend (a SIGTSTP came).
type suspendMsg struct{}

// suspend suspends the app as a job, in Bubble Tea's event loop (from the
// program's filter): it gives the terminal back (the main screen, the
// modes learn found), says so on out, with what becomes of PostgreSQL,
// and stops until fg; then, once it has the terminal's foreground again
// (not after bg), it takes the terminal again and draws the whole screen.
// Where learn cannot be suspended (a shell without job control) it returns
// a notice for the app to show instead. When ctx ends meanwhile (kill %1
// sends SIGTERM, then SIGCONT) it leaves the terminal as it gave it back.
func suspend(ctx context.Context, p *tea.Program, in io.Reader, out io.Writer, db *live.Postgres) tea.Msg {
	if !supervisor.CanSuspend() {
		return common.Notice{Text: "ctrl+z: learn cannot be suspended here (the shell has no job control); q quits"}
	}
	if err := p.ReleaseTerminal(); err != nil {
		return nil
	}
	// The terminal may still be raw (learn's supervisor drew the first
	// frame in raw mode): end the lines with \r\n.
	_, _ = io.WriteString(out, "learn is suspended"+suspendedDB(db)+". Type fg to come back to it.\r\n")
	resumed := supervisor.Suspend(ctx)
	tty, _ := in.(*ttyin.File)
	if resumed && tty != nil {
		resumed = waitForeground(ctx, tty.File) == nil
	}
	if !resumed || ctx.Err() != nil {
		// learn ends (the signal ends ctx, whose end sends the program
		// Quit) while the shell has the terminal, maybe in the
		// background: Bubble Tea's way out would set the terminal's mode
		// again, and stop on SIGTTOU there.
		if tty != nil {
			tty.Detach()
		}
		signal.Ignore(syscall.SIGTTOU)
		return nil
	}
	_ = p.RestoreTerminal()
	return nil
}

// suspendedDB says what becomes of the app's PostgreSQL while it is
// suspended.
func suspendedDB(db *live.Postgres) string {
	ready, _, err := db.Status()
	switch {
	case err != nil:
		return ""
	case ready:
		return "; its PostgreSQL keeps running, with your runs as they were"
	}
	return "; its PostgreSQL goes on starting"
}
