package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/quiz"
)

// runProgress is `learn progress [reset|export]`: a summary of the saved
// progress, a reset after asking (or with --yes), or the file as JSON.
func runProgress(args []string, g *globals, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("progress", g)
	yes := fs.Bool("yes", false, "reset without asking")
	pos, err := parse(fs, args)
	if err != nil {
		return 2, err
	}
	if len(pos) > 1 {
		return 2, usageErrorf("progress takes at most one of reset or export, got %s", strings.Join(pos, " "))
	}
	path, err := quiz.DefaultPath()
	if err != nil {
		return 1, fmt.Errorf("no place to keep progress: %w (set XDG_STATE_HOME)", err)
	}
	store := &quiz.Store{Path: path}
	sub := ""
	if len(pos) == 1 {
		sub = pos[0]
	}
	switch sub {
	case "":
		p, notices, err := store.Load()
		for _, n := range notices {
			fmt.Fprintln(stderr, "learn:", n)
		}
		if err != nil {
			return 1, err
		}
		fmt.Fprintf(stdout, "Progress in %s\n\n%s", path, quiz.Summary(p, time.Now()))
		return 0, nil
	case "export":
		return 0, store.Export(stdout)
	case "reset":
		if !*yes {
			if !isTerminal(stdin) {
				return 2, usageErrorf("progress reset asks first: answer at a terminal, or pass --yes")
			}
			fmt.Fprintf(stdout, "Forget everything in %s (pages read, scores, the drill's schedule)? [y/N] ", path)
			answer, _ := bufio.NewReader(stdin).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
				fmt.Fprintln(stdout, "Nothing changed.")
				return 0, nil
			}
		}
		if err := store.Reset(); err != nil {
			return 1, err
		}
		fmt.Fprintln(stdout, "Progress reset: learn starts over.")
		return 0, nil
	}
	return 2, usageErrorf("progress: unknown %q: use reset or export", sub)
}
