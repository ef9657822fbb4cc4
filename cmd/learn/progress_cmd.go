package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/headless"
)

// progressCmd is learn progress, with reset and export: a summary of the
// saved progress, a reset after asking (or with --yes), or the file as JSON.
func progressCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "progress",
		Short: "Your progress: a summary; reset starts over, export prints the saved JSON",
		Long:  "Print a summary of your saved progress: " + headless.ProgressHolds + ". It is kept under $XDG_STATE_HOME/learn (or ~/.local/state/learn).",
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
			return exit.New(headless.ProgressSummary(cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	var yes bool
	reset := &cobra.Command{
		Use:   "reset",
		Short: "Forget all progress, after asking (or with --yes)",
		Args:  noArgs("progress reset"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			code, err := headless.ProgressReset(cmd.InOrStdin(), cmd.OutOrStdout(), yes)
			if errors.Is(err, headless.ErrResetAsksFirst) {
				return usageErrorf(cmd, "%v", err)
			}
			return exit.New(code, err)
		},
	}
	reset.Flags().BoolVar(&yes, "yes", false, "reset without asking (needed without a terminal)")
	export := &cobra.Command{
		Use:   "export",
		Short: "Print the saved progress as JSON",
		Args:  noArgs("progress export"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exit.New(headless.ProgressExport(cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	cmd.AddCommand(reset, export)
	return cmd
}
