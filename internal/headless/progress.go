package headless

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize/english"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// ProgressHolds is what the progress file holds, as the summary shows it
// (quiz.Summary), for learn progress's help and the reset question.
const ProgressHolds = "pages read, quiz scores, the design lab's challenges, the drill's schedule"

// ErrResetAsksFirst is ProgressReset's refusal to forget the progress
// without asking, and without a terminal to ask at: a usage error for the
// command line.
var ErrResetAsksFirst = errors.New("progress reset asks first: answer at a terminal, or pass --yes")

// progressStore is the learner's progress file.
func progressStore() (*progress.Store, string, error) {
	path, err := progress.DefaultPath()
	if err != nil {
		return nil, "", err // it says which variable to set
	}
	return &progress.Store{Path: path, Known: quiz.Known}, path, nil
}

// resetQuestion is what `learn progress reset` asks at a terminal before
// it forgets the progress file at path.
func resetQuestion(path string) string {
	return fmt.Sprintf("Forget everything in %s (%s)? [y/N] ", path, ProgressHolds)
}

// nothingSaved is the first line of quiz.Summary for progress never saved.
const nothingSaved = "Progress: nothing saved yet.\n"

// ProgressSummary is learn progress: it prints where the progress is kept
// and its summary; the notices (a damaged file, values left out, an older
// format, a read-only file) go to stderr. It only reads: it changes no
// file and creates none.
func ProgressSummary(stdout, stderr io.Writer) (int, error) {
	store, path, err := progressStore()
	if err != nil {
		return exit.Failure, err
	}
	p, notices, err := store.Peek()
	for _, n := range notices {
		fmt.Fprintln(stderr, "learn:", n)
	}
	if err != nil {
		return exit.Failure, err
	}
	now := time.Now()
	summary := quiz.Summary(p, now)
	if rest, ok := strings.CutPrefix(summary, nothingSaved); ok && len(notices) > 0 && quiz.IsBlank(p, now) {
		// A file is there, but nothing in it could be used: "nothing
		// saved yet" would contradict the notice just printed.
		summary = "Progress: nothing usable in the file (the notice above says why).\n" + rest
	}
	fmt.Fprintf(stdout, "Progress in %s\n\n%s%s", path, summary, exercisesSummary(p))
	return exit.OK, nil
}

// exercisesSummary is the progress's part on learn exercises: each
// exercise's state at its last check and the hints taken ("" before any
// check or hint).
func exercisesSummary(p *progress.Progress) string {
	if len(p.Exercises) == 0 {
		return ""
	}
	var b strings.Builder
	passed, now := 0, 0
	for _, e := range exercises.Ladder {
		if !p.Exercises[e.ID].PassedAt.IsZero() {
			passed++
		}
		if p.Exercises[e.ID].State == string(exercises.Passed) {
			now++
		}
	}
	fmt.Fprintf(&b, "\nExercises (learn exercises): %d of %d passed once, %d at the last check\n", passed, len(exercises.Ladder), now)
	for _, e := range exercises.Ladder {
		x := p.Exercises[e.ID]
		mark, says := "[ ]", "not checked yet"
		if x.State != "" {
			says = stateWords(exercises.State(x.State)) + " at the last check"
		}
		if !x.PassedAt.IsZero() {
			mark = "[x]"
			says += fmt.Sprintf(", first passed %s", x.PassedAt.Local().Format("2 Jan 2006"))
		}
		if x.Hints > 0 {
			says += fmt.Sprintf(", %s taken", english.Plural(x.Hints, "hint", ""))
		}
		fmt.Fprintf(&b, "  %s %s: %s\n", mark, e.Title, says)
	}
	return b.String()
}

// ProgressExport is learn progress export: it prints the saved progress as
// JSON, and on stderr the notices of what was left out of it. It only
// reads, as ProgressSummary.
func ProgressExport(stdout, stderr io.Writer) (int, error) {
	store, _, err := progressStore()
	if err != nil {
		return exit.Failure, err
	}
	if err := store.Export(stdout); err != nil {
		return exit.Failure, err
	}
	_, notices, _ := store.Peek()
	for _, n := range notices {
		fmt.Fprintln(stderr, "learn:", n)
	}
	return exit.OK, nil
}

// ProgressReset is learn progress reset: it forgets the progress at once
// with yes, else after a "y" read from stdin, a terminal, having asked on
// stdout. Without a terminal and without yes it is exit.Usage and
// ErrResetAsksFirst, and nothing changes.
func ProgressReset(stdin io.Reader, stdout io.Writer, yes bool) (int, error) {
	store, path, err := progressStore()
	if err != nil {
		return exit.Failure, err
	}
	if !yes {
		if !isTerminal(stdin) {
			return exit.Usage, ErrResetAsksFirst
		}
		fmt.Fprint(stdout, resetQuestion(path))
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Nothing changed.")
			return exit.OK, nil
		}
	}
	if err := store.Reset(); err != nil {
		return exit.Failure, err
	}
	fmt.Fprintln(stdout, "Progress reset: learn starts over.")
	return exit.OK, nil
}
