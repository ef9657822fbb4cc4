package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/headless"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
)

// defaultExercisesDir is where learn exercises init writes the module.
const defaultExercisesDir = headless.DefaultExercisesDir

// exercisesCmd is learn exercises: the learner writes the booking
// transaction in Go and pgx, and learn check's scenarios judge it live.
func exercisesCmd(g *globals) *cobra.Command {
	var ids, ladder []string
	for i, e := range exercises.Ladder {
		ids = append(ids, fmt.Sprintf("  %d. %-16s %s", i+1, e.ID, e.Title))
		ladder = append(ladder, e.ID)
	}
	dirArg := func(name string) cobra.PositionalArgs {
		return func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf(cmd, "%s takes one directory, the exercises' module (default ./%s), got %s", name, defaultExercisesDir, strings.Join(args, " "))
			}
			return nil
		}
	}
	dirs := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	check := func(cmd *cobra.Command, args []string, only string, asJSON bool) error {
		dir, err := headless.ExercisesDir(args)
		if err != nil {
			return usageErrorf(cmd, "%v", err)
		}
		var ids []string
		if only != "" {
			if _, err := exercises.Find(only); err != nil {
				return usageErrorf(cmd, "--only: %v", err)
			}
			ids = exercises.UpTo(only)
		}
		opts, err := g.options(cmd)
		if err != nil {
			return err
		}
		return exit.New(headless.ExercisesCheck(cmd.Context(), dir, ids, opts, asJSON, cmd.OutOrStdout(), cmd.ErrOrStderr()))
	}
	cmd := &cobra.Command{
		Use:   "exercises [DIR]",
		Short: "Write the booking transaction yourself, in Go and pgx, checked live by the lesson's scenarios",
		Long: "learn exercises init writes a small Go module (default ./" + defaultExercisesDir + "): a booking API in learn serve's shape whose BookTicket (booking.go), client (client.go) and tables (schema.sql) are yours to write, one exercise at a time. " +
			"learn exercises check builds it with your Go (" + exercises.MinGo + " or newer), creates its tables on a throwaway PostgreSQL, starts two API instances of it, and runs learn check's scenarios against them, a crash before COMMIT included: each exercise passes when its scenarios and every earlier one's hold, judged by the same invariants as the lab's.\n\n" +
			"The exercises, in order:\n" + strings.Join(ids, "\n") + "\n\n" +
			"learn exercises [DIR] opens the exercises' screen: the ladder, the current exercise's goal and scorecard, h for a hint, Enter on a row to play that scenario from your own statements; it checks again each time you save a file of the module. Without a terminal it checks the module as learn exercises check does. Over SSH (learn workshop) the exercises are not offered: they build and run your code on the machine learn runs on.",
		Example:     "learn exercises init\n$EDITOR learn-exercises/booking.go\nlearn exercises check\nlearn exercises hint\nlearn exercises check --json --only replay",
		Args:        dirArg("exercises"),
		Annotations: fullScreenCmd(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if isTerminal(cmd.InOrStdin()) && isTerminal(cmd.OutOrStdout()) {
				if _, err := g.options(cmd); err != nil {
					return err
				}
				g.exercisesDir = "" // the app's choice: ./ when it is the module, ./learn-exercises, or the last opened
				if len(args) == 1 {
					g.exercisesDir = args[0]
				}
				return exit.New(runApp(cmd.Context(), g, common.Open{Place: progress.Place{Page: progress.PageExercises}}, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
			}
			if g.preview != nil {
				return nil // the supervisor's look at the command line: nothing runs
			}
			return check(cmd, args, "", false)
		},
		ValidArgsFunction: dirs,
	}
	var restore bool
	initCmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write the exercises' Go module into DIR (default ./" + defaultExercisesDir + ")",
		Long: "Write the exercises' module into DIR, which must be new or empty: go.mod, main.go, learn.go and types.go (learn's harness: do not edit them), and booking.go, client.go and schema.sql (yours, with a TODO for each exercise). " +
			"With --restore, DIR's harness files and go.mod are written again as learn has them, and your booking.go, client.go and schema.sql are left as they are (written as they start only when missing).",
		Args: dirArg("exercises init"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := defaultExercisesDir
			if len(args) == 1 {
				dir = args[0]
			}
			code, err := headless.ExercisesInit(dir, restore, cmd.OutOrStdout())
			if code == exitUsage {
				return usageErrorf(cmd, "%v", err)
			}
			return exit.New(code, err)
		},
		ValidArgsFunction: dirs,
	}
	initCmd.Flags().BoolVar(&restore, "restore", false, "write learn's harness files again, keeping your booking.go, client.go and schema.sql")
	var only string
	var asJSON bool
	checkCmd := &cobra.Command{
		Use:   "check [DIR]",
		Short: "Build the module in DIR and run every exercise's scenarios on it",
		Long: "Build the module in DIR (default ./" + defaultExercisesDir + "), create its tables on a throwaway PostgreSQL, start two API instances of it, and run each exercise's scenarios against them; print each exercise's state and, under the first that does not pass, its goal and the verdicts of its scenarios. The states are saved with your progress (learn progress). " +
			"Exit 0 only when every exercise checked passes, 1 when one does not or the module does not build or start (the compiler's output is shown as it printed it), 2 for a command line it cannot use.",
		Args: dirArg("exercises check"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return check(cmd, args, only, asJSON)
		},
		ValidArgsFunction: dirs,
	}
	checkCmd.Flags().StringVar(&only, "only", "", "check this exercise and those before it (an exercise's id)")
	checkCmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object: each exercise's state, with learn check's rows")
	_ = checkCmd.RegisterFlagCompletionFunc("only", cobra.FixedCompletions(ladder, cobra.ShellCompDirectiveNoFileComp))
	hintCmd := &cobra.Command{
		Use:               "hint [EXERCISE]",
		Short:             "The next hint of an exercise (default: the first not passed)",
		Long:              "Print the next hint of the exercise (by id; default: the first one the last check did not pass). Each exercise has two, the second nearer the answer; how many you took is saved with your progress.",
		ValidArgsFunction: completeOne(ladder),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf(cmd, "exercises hint takes one exercise, got %s", strings.Join(args, " "))
			}
			if len(args) == 1 {
				if _, err := exercises.Find(args[0]); err != nil {
					return usageErrorf(cmd, "%v", err)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return exit.New(headless.ExercisesHint(id, cmd.OutOrStdout()))
		},
	}
	cmd.AddCommand(initCmd, checkCmd, hintCmd)
	return cmd
}
