package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/headless"
	"github.com/learn-idempotency/learn/sim"
)

// labCmd is learn lab: every scenario run against a design composed from
// switches, and its scorecard.
func labCmd(g *globals) *cobra.Command {
	var sets []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Run every scenario against a design of your own and print the scorecard",
		Long: "The design lab: compose a booking endpoint from switches (--set name=value, the lesson's design for every switch you leave out), run every scenario against it on a throwaway PostgreSQL, each in a schema of its own and all at once, and print the scorecard: per scenario, the guarantee that held or the consequence in the user's terms with the invariants that failed. With --json, one JSON object. Exit 0 when it ran, whatever the verdicts.\n\n" +
			"Switches (the lesson's value first):\n" + switchHelp(),
		Example: "learn lab\nlearn lab --set lookup=after-seat-check\nlearn lab --set lookup=after-seat-check --set constraint=none --json",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageErrorf(cmd, "lab takes no names, got %s; set switches with --set name=value", strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			design, err := sim.ParseSwitches(sets)
			if err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			opts, err := g.options(cmd)
			if err != nil {
				return err
			}
			dl := headless.NewDownloadReport(cmd.ErrOrStderr(), "learn: ")
			opts.OnDownload = dl.Update
			defer dl.Finish()
			return exit.New(headless.Lab(cmd.Context(), design, opts, asJSON, cmd.OutOrStdout()))
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "a switch of the design, name=value (repeat for several)")
	_ = cmd.RegisterFlagCompletionFunc("set", completeSwitch)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// completeSwitch completes --set: the switches' names followed by "=",
// then, after "name=", that switch's values, each with what it means.
func completeSwitch(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	name, _, named := strings.Cut(toComplete, "=")
	for _, s := range sim.LabSwitches() {
		switch {
		case !named:
			out = append(out, cobra.CompletionWithDesc(s.Name+"=", s.Explain))
		case s.Name == name:
			for _, v := range s.Values {
				out = append(out, cobra.CompletionWithDesc(s.Name+"="+v, sim.Means(s.Name, v)))
			}
		}
	}
	if !named {
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// switchHelp lists every switch and its values.
func switchHelp() string {
	var b strings.Builder
	for _, s := range sim.LabSwitches() {
		fmt.Fprintf(&b, "  %-11s %s: %s\n", s.Name, strings.Join(s.Values, ", "), s.Explain)
	}
	return b.String()
}
