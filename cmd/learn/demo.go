package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/flagval"
	"github.com/learn-idempotency/learn/internal/headless"
	"github.com/learn-idempotency/learn/internal/pgwait"
	"github.com/learn-idempotency/learn/sim"
)

// demoCmd is learn demo SCENARIO: one run headless, and its report.
func demoCmd(g *globals) *cobra.Command {
	var copies int
	var variant string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "demo SCENARIO",
		Short: "Run a scenario headless and print its report",
		Long: "Run one scenario on a throwaway PostgreSQL, without the app, and print what happened: the answers the browser got, the rows, every try, and the invariants checked after the run. With --json, one JSON object.\n\n" +
			"Scenarios: " + scenarioNames() + "\nWith a broken variant: " + brokenNames(),
		Example:           "learn demo lost-answer --json\nlearn demo concurrent-copies --copies 10 --json\nlearn demo last-seats --variant broken",
		ValidArgsFunction: completeOne(scenarioList()),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd, "demo takes one scenario name (%s)", scenarioNames())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := g.options(cmd)
			if err != nil {
				return err
			}
			s, v, err := lookupScenario(cmd, args[0], variant)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("copies") && !s.Copies {
				return usageErrorf(cmd, "--copies is for the scenarios of copies only: %s", strings.Join(copyScenarios(), ", "))
			}
			dl := headless.NewDownloadReport(cmd.ErrOrStderr(), "learn: ")
			opts.OnDownload = dl.Update
			defer dl.Finish()
			// A statement held up by another session (a lock on a
			// catalog) is said on stderr while it waits.
			ctx := pgwait.WithTrace(cmd.Context(), func(msg string) {
				if msg != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), "learn demo: "+msg)
				}
			})
			return exit.New(headless.Demo(ctx, s, sim.Options{Variant: v, Copies: copies}, opts, asJSON, cmd.OutOrStdout()))
		},
	}
	cmd.Flags().Var(flagval.NewRange(&copies, "copies", sim.DefaultCopies, sim.MinCopies, sim.MaxCopies), "copies",
		fmt.Sprintf("simultaneous copies, for concurrent-copies and copies-repeatable-read (%d to %d)", sim.MinCopies, sim.MaxCopies))
	addVariantFlag(cmd, &variant)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// copyScenarios are the names of the scenarios that take --copies.
func copyScenarios() []string {
	var names []string
	for _, s := range sim.Scenarios() {
		if s.Copies {
			names = append(names, s.Name)
		}
	}
	return names
}
