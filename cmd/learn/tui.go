package main

import (
	"context"
	"fmt"
	"io"

	"github.com/learn-idempotency/learn/internal/ui"
	"github.com/learn-idempotency/learn/internal/ui/common"
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
	ui.AppGC()
	err = ui.Run(ctx, ui.Config{First: first, Theme: g.theme, Present: g.present, Postgres: opts,
		In: stdin, Out: stdout, Errors: stderr, ExercisesDir: g.exercisesDir})
	if err != nil { // an exit.Signalled keeps its code: "interrupted", 130
		return 1, err
	}
	return 0, nil
}

// firstFrame is the supervisor's first frame of the command line l: when
// it opens the app, the screen the app will draw, drawn at once
// (ui.FirstFrame). It draws nothing (false) for a command line that does
// not open the app or that learn cannot take: the app's process says why.
func (l launch) firstFrame(w io.Writer) bool {
	return l.first != nil && ui.FirstFrame(w, *l.first, l.g.theme, l.g.present)
}
