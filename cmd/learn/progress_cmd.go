package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// progressCmd is learn progress, with reset and export: a summary of the
// saved progress, a reset after asking (or with --yes), or the file as JSON.
func progressCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "progress",
		Short: "Your progress: a summary; reset starts over, export prints the saved JSON",
		Long:  "Print a summary of your saved progress: " + progressHolds + ". It is kept under $XDG_STATE_HOME/learn (or ~/.local/state/learn).",
		Example: `learn progress
learn progress export > progress.json
learn progress reset --yes`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd, "progress: unknown %q: use reset or export", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit.New(progressSummary(cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	var yes bool
	reset := &cobra.Command{
		Use:   "reset",
		Short: "Forget all progress, after asking (or with --yes)",
		Args:  noArgs("progress reset"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit.New(progressReset(cmd, yes))
		},
	}
	reset.Flags().BoolVar(&yes, "yes", false, "reset without asking (needed without a terminal)")
	export := &cobra.Command{
		Use:   "export",
		Short: "Print the saved progress as JSON",
		Args:  noArgs("progress export"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit.New(progressExport(cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	cmd.AddCommand(reset, export)
	return cmd
}

// progressStore is the learner's progress file.
func progressStore() (*progress.Store, string, error) {
	path, err := progress.DefaultPath()
	if err != nil {
		return nil, "", err // it says which variable to set
	}
	return &progress.Store{Path: path, Known: quiz.Known}, path, nil
}

// progressHolds is what the progress file holds, as the summary shows it
// (quiz.Summary), for the help and the reset question.
const progressHolds = "pages read, quiz scores, the design lab's challenges, the drill's schedule"

// resetQuestion is what `learn progress reset` asks at a terminal before
// it forgets the progress file at path.
func resetQuestion(path string) string {
	return fmt.Sprintf("Forget everything in %s (%s)? [y/N] ", path, progressHolds)
}

// nothingSaved is the first line of quiz.Summary for progress never saved.
const nothingSaved = "Progress: nothing saved yet.\n"

// progressSummary prints where the progress is kept and its summary; the
// notices (a damaged file, values left out, an older format, a read-only
// file) go to stderr. It only reads: it changes no file and creates none.
func progressSummary(stdout, stderr io.Writer) (int, error) {
	store, path, err := progressStore()
	if err != nil {
		return exitFailure, err
	}
	p, notices, err := store.Peek()
	for _, n := range notices {
		fmt.Fprintln(stderr, "learn:", n)
	}
	if err != nil {
		return exitFailure, err
	}
	now := time.Now()
	summary := quiz.Summary(p, now)
	if rest, ok := strings.CutPrefix(summary, nothingSaved); ok && len(notices) > 0 && quiz.IsBlank(p, now) {
		// A file is there, but nothing in it could be used: "nothing
		// saved yet" would contradict the notice just printed.
		summary = "Progress: nothing usable in the file (the notice above says why).\n" + rest
	}
	fmt.Fprintf(stdout, "Progress in %s\n\n%s", path, summary)
	return exitOK, nil
}

// progressExport prints the saved progress as JSON, and on stderr the
// notices of what was left out of it. It only reads, as progressSummary.
func progressExport(stdout, stderr io.Writer) (int, error) {
	store, _, err := progressStore()
	if err != nil {
		return exitFailure, err
	}
	if err := store.Export(stdout); err != nil {
		return exitFailure, err
	}
	_, notices, _ := store.Peek()
	for _, n := range notices {
		fmt.Fprintln(stderr, "learn:", n)
	}
	return exitOK, nil
}

// progressReset forgets the progress: at once with yes, else after a "y"
// at the terminal; without a terminal and without yes it is a usage error.
func progressReset(cmd *cobra.Command, yes bool) (int, error) {
	store, path, err := progressStore()
	if err != nil {
		return exitFailure, err
	}
	stdin, stdout := cmd.InOrStdin(), cmd.OutOrStdout()
	if !yes {
		if !isTerminal(stdin) {
			return exitUsage, usageErrorf(cmd, "progress reset asks first: answer at a terminal, or pass --yes")
		}
		fmt.Fprint(stdout, resetQuestion(path))
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Nothing changed.")
			return exitOK, nil
		}
	}
	if err := store.Reset(); err != nil {
		return exitFailure, err
	}
	fmt.Fprintln(stdout, "Progress reset: learn starts over.")
	return exitOK, nil
}
