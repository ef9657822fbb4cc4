package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim/check"
)

// DefaultExercisesDir is where learn exercises init writes the module and
// where the other exercises commands look for it, unless given a
// directory: ui.DefaultExercisesDir, the app's.
const DefaultExercisesDir = "learn-exercises"

// ExercisesInit is learn exercises init: it writes the exercises' module
// into dir, which must be new or empty, and says what the first exercise
// is and how to open its screen; with restore, it writes only learn's
// harness files and go.mod again, keeping the learner's. It returns
// [exit.Usage] with the error's message for a dir it cannot take (the
// caller makes it the usage error of its command), 1 when the file system
// fails.
func ExercisesInit(dir string, restore bool, stdout io.Writer) (int, error) {
	if restore {
		if err := exercises.Restore(dir); err != nil {
			return exit.Usage, err
		}
		fmt.Fprintf(stdout, "learn exercises: main.go, learn.go, types.go and go.mod in %s are learn's again; booking.go, client.go and schema.sql are as you left them\n", dir)
		return exit.OK, nil
	}
	if err := exercises.Write(dir, false); err != nil {
		if _, ok := errors.AsType[*exercises.NotEmptyError](err); ok {
			return exit.Usage, err
		}
		return exit.Failure, err // the file system's: nothing wrong with the command line
	}
	first := exercises.Ladder[0]
	fmt.Fprintf(stdout, "learn exercises: wrote the module in %s\n\nThe first exercise: %s\n%s\nWrite it in %s/%s (the TODO(%s) lines), then open the screen, which checks again each time you save:\n  %s\n",
		dir, first.Title, first.Goal, dir, first.File, first.ID, strings.TrimSpace("learn exercises "+shellQuote(dirOrDefault(dir))))
	return exit.OK, nil
}

// shellQuote is s as one word of a shell command line.
func shellQuote(s string) string {
	if s == "" || !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dirOrDefault is dir as an argument of learn exercises check: none for
// the default.
func dirOrDefault(dir string) string {
	if dir == DefaultExercisesDir {
		return ""
	}
	return dir
}

// ExercisesDir is the module's directory of the exercises commands'
// arguments args: the one given, or the default, which must hold a module
// learn exercises init wrote. The error is a usage error's message.
func ExercisesDir(args []string) (string, error) {
	dir := DefaultExercisesDir
	if len(args) == 1 {
		dir = args[0]
	}
	if _, err := os.Stat(dir); err != nil {
		if len(args) == 0 {
			return "", fmt.Errorf("there is no ./%s here: learn exercises init writes the exercises' module (or give its directory)", DefaultExercisesDir)
		}
		return "", fmt.Errorf("%s: %w: learn exercises init %s writes the exercises' module there", dir, err, dir)
	}
	if _, err := os.Stat(dir + "/booking.go"); err != nil {
		return "", fmt.Errorf("%s holds no exercises (no booking.go): learn exercises init writes them into a new directory", dir)
	}
	return dir, nil
}

// ExercisesCheck is learn exercises check: it checks the module in dir
// (the exercises ids, or all for nil) on a throwaway PostgreSQL, prints each exercise's state (or, asJSON, the
// report), and saves the states with the progress. Exit 0 only when every
// exercise checked passed; a module that does not build or start is exit
// 1 with what went wrong.
func ExercisesCheck(ctx context.Context, dir string, ids []string, opts pgtemp.Options, asJSON bool, stdout, stderr io.Writer) (int, error) {
	ctx, cancel := signalContext(ctx)
	defer cancel()
	srv, err := pgtemp.Start(ctx, opts)
	if ctx.Err() != nil {
		return exit.OK, exit.Interrupted(ctx, " while PostgreSQL was starting; nothing is left behind")
	}
	if err != nil {
		return exit.Failure, err
	}
	defer srv.Close()
	if !asJSON {
		fmt.Fprintf(stdout, "learn exercises: building and checking %s\n", dir)
	}
	eo := exercises.Options{Exercises: ids}
	if !asJSON {
		// Each row as it comes: a check of a program that hangs takes
		// its timeouts, and says where it is meanwhile.
		eo.Phase = func(p string) { fmt.Fprintf(stdout, "  %s…\n", p) }
		eo.Done = func(id string, row check.Row) {
			fmt.Fprintf(stdout, "    %s %s: %s\n", row.State.Mark(), id, row.Title)
		}
	}
	rep, err := exercises.Check(ctx, dir, srv, eo)
	if ctx.Err() != nil {
		return exit.OK, exit.Interrupted(ctx, ": the check did not finish; the booking API is stopped and its tables removed")
	}
	if err != nil {
		return exit.Failure, err
	}
	if rep.Stopped == "" {
		if err := SaveExercises(rep); err != nil {
			fmt.Fprintln(stderr, "learn: the exercises' states were not saved:", err)
		}
	}
	code := exit.OK
	if !AllPassed(rep) {
		code = exit.Failure
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return code, enc.Encode(rep)
	}
	PrintExercises(stdout, rep)
	return code, nil
}

// AllPassed reports whether every exercise rep checked passed (and at
// least one was checked).
func AllPassed(rep *exercises.Report) bool {
	checked := 0
	for _, st := range rep.Exercises {
		switch st.State {
		case exercises.Passed:
			checked++
		case exercises.Unrun:
		default:
			return false
		}
	}
	return rep.Stopped == "" && checked > 0
}

// PrintExercises writes rep for a person: why nothing ran, or each
// exercise's state, and under the current one its goal, where to write
// it, and its rows that did not pass.
func PrintExercises(w io.Writer, rep *exercises.Report) {
	if rep.Stopped != "" {
		fmt.Fprintf(w, "\nNothing was checked:\n%s\n", indent(rep.Stopped))
		return
	}
	for _, s := range rep.Instances {
		fmt.Fprintf(w, "\nYour booking API %s\n", indent(s)[4:])
	}
	fmt.Fprintln(w)
	for i, st := range rep.Exercises {
		fmt.Fprintf(w, "  %s %d. %-56s %s\n", stateMark(st.State), i+1, st.Title, stateWords(st.State))
	}
	for _, st := range rep.Exercises {
		if st.ID != rep.Current {
			continue
		}
		fmt.Fprintf(w, "\nNow: %s (%s)\n%s\nWrite it in %s (the TODO(%s) lines). The lesson: %s\n", st.Title, st.ID, st.Goal, st.File, st.ID, sentence(st.Lesson))
		for _, row := range st.Rows {
			if row.State == check.Pass {
				continue
			}
			fmt.Fprintf(w, "  %s %s: %s\n", row.State.Mark(), row.Title, check.Printable(row.Says))
			if row.Report != nil {
				for _, inv := range row.Report.Verdict.Failed {
					fmt.Fprintf(w, "      failed: %s (%s)\n", inv.Name, check.Printable(inv.Detail))
				}
			}
		}
		fmt.Fprintf(w, "A hint: learn exercises hint %s\n", st.ID)
	}
	if rep.Current == "" {
		fmt.Fprintf(w, "\nEvery exercise passes: your BookTicket holds in every scenario learn can run on it.\n")
	}
	fmt.Fprintf(w, "\n%d of %d exercises passed (took %s)\n", rep.Passed, len(rep.Exercises), rep.Took)
}

// stateMark is an exercise state's mark.
func stateMark(s exercises.State) string {
	switch s {
	case exercises.Passed:
		return "✓"
	case exercises.Failing:
		return "✗"
	case exercises.Waiting:
		return "·"
	}
	return "?"
}

// stateWords says an exercise state in a row.
func stateWords(s exercises.State) string {
	switch s {
	case exercises.Failing:
		return "not yet"
	case exercises.Waiting:
		return "holds already"
	}
	return string(s)
}

// indent indents each line of s by four spaces.
func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// SaveExercises saves each checked exercise's state with the progress.
func SaveExercises(rep *exercises.Report) error {
	store, _, err := progressStore()
	if err != nil {
		return err
	}
	_, err = store.Update(func(p *progress.Progress) error {
		rep.Record(p, time.Now())
		return nil
	})
	return err
}

// ExercisesHint is learn exercises hint: the next hint of exercise id
// (the first not yet passed, for ""), counted in the progress; after the
// last hint, it shows the last again.
func ExercisesHint(id string, stdout io.Writer) (int, error) {
	store, _, err := progressStore()
	if err != nil {
		return exit.Failure, err
	}
	var e exercises.Exercise
	var n int
	_, err = store.Update(func(p *progress.Progress) error {
		if id == "" {
			id = exercises.Ladder[len(exercises.Ladder)-1].ID
			for _, x := range exercises.Ladder {
				if p.Exercises[x.ID].State != string(exercises.Passed) {
					id = x.ID
					break
				}
			}
		}
		var err error
		if e, err = exercises.Find(id); err != nil {
			return err
		}
		n = p.TakeHint(e.ID, len(e.Hints))
		return nil
	})
	if err != nil {
		return exit.Failure, err
	}
	fmt.Fprintf(stdout, "%s, hint %d of %d:\n%s\n", e.Title, n, len(e.Hints), e.Hints[n-1])
	if n < len(e.Hints) {
		fmt.Fprintf(stdout, "(again for hint %d)\n", n+1)
	}
	return exit.OK, nil
}

// sentence is s ended as a sentence: a full stop unless it ends with a
// mark of its own ("…, and why?").
func sentence(s string) string {
	if strings.HasSuffix(s, "?") || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}
