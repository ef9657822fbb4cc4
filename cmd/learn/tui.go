package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"github.com/learn-idempotency/learn/internal/childenv"
	"github.com/learn-idempotency/learn/internal/ui"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// runApp runs the Bubble Tea app (ui.Run) showing first. The throwaway
// PostgreSQL starts in the background at once and is stopped and removed on
// every way out: quit, Ctrl-C, SIGTERM, SIGHUP, or an error of the program.
// Ctrl-C gives 130 and "interrupted", as everywhere in learn; a signal
// that ended ctx is turned into its code and word by the caller (exit.BySignal).
func runApp(ctx context.Context, g *globals, first common.Open, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if g.preview != nil {
		g.preview(first)
		return exitOK, nil
	}
	if !isTerminal(stdin) || !isTerminal(stdout) {
		return 2, fmt.Errorf("the app needs a terminal; without one, use the plain commands:\n" +
			"  learn lesson | less          read the lesson as text\n" +
			"  learn interview | less       read the interview card as text\n" +
			"  learn demo lost-answer --json\n" +
			"  learn demo concurrent-copies --copies 10 --json\n" +
			"  learn serve                  the booking API, for curl\n" +
			"  learn doctor                 which PostgreSQL learn would use\n" +
			"  learn progress               your saved progress")
	}
	opts, err := g.pgOptions()
	if err != nil {
		return 2, err
	}
	appGC()
	err = ui.Run(ctx, ui.Config{First: first, Theme: g.theme, Present: g.present, Postgres: opts,
		In: stdin, Out: stdout, Errors: stderr, ExercisesDir: g.exercisesDir})
	if err != nil { // an exit.Signalled keeps its code: "interrupted", 130
		return 1, err
	}
	return 0, nil
}

// firstFrame is the supervisor's first frame of the command line l: when
// it opens the app, it draws at once, on the alternate screen, the screen
// the app will draw (ui.Preview), so the person does not wait for the
// app's own process to start. It draws nothing (false) for a command line
// that does not open the app or that learn cannot take: the app's process
// says why.
func (l launch) firstFrame(w io.Writer) bool {
	if l.first == nil || childenv.EastAsianWidths() {
		// With RUNEWIDTH_EASTASIAN set this process measures widths
		// otherwise than the app's (childenv.Environ): the app draws first.
		return false
	}
	cols, rows, err := term.GetSize(os.Stdout.Fd())
	if err != nil || cols <= 0 || rows <= 0 {
		return false
	}
	frame, ok := ui.Preview(*l.first, l.g.theme, l.g.present, cols, rows, peekProgress())
	if !ok {
		return false
	}
	_, _ = io.WriteString(w, ansi.SetModeAltScreenSaveCursor+ansi.HideCursor+ansi.EraseEntireScreen+ansi.CursorHomePosition)
	out := &colorprofile.Writer{Forward: w, Profile: lipgloss.Writer.Profile}
	_, _ = io.WriteString(out, strings.ReplaceAll(frame, "\n", "\r\n"))
	return true
}

// peekProgress is the learner's progress as saved, read without changing
// the file; nil when there is none to read.
func peekProgress() *progress.Progress {
	path, err := progress.DefaultPath()
	if err != nil {
		return nil
	}
	p, _, err := (&progress.Store{Path: path, Known: quiz.Known}).Peek()
	if err != nil {
		return nil
	}
	return p
}

// appGCPercent is the app's garbage collection target (GOGC) unless GOGC
// is set: the app's heap is mostly each frame's garbage (a page wrapped
// again for the viewport), so half Go's default keeps reading the lesson
// under its memory target, for collections twice as often (BENCHMARKS.md
// has both figures). Only the app's process sets it; learn
// serve, demo and the workshop keep Go's default.
const appGCPercent = 50

func appGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(appGCPercent)
	}
}
