package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/pgwait"
	"github.com/learn-idempotency/learn/pgtemp"
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
			if cmd.Flags().Changed("copies") && s.Name != "concurrent-copies" {
				return usageErrorf(cmd, "--copies is for concurrent-copies only")
			}
			dl := newDownloadReport(cmd.ErrOrStderr(), "learn: ")
			opts.OnDownload = dl.update
			defer dl.finish()
			// A statement held up by another session (a lock on a
			// catalog) is said on stderr while it waits.
			ctx := pgwait.WithTrace(cmd.Context(), func(msg string) {
				if msg != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), "learn demo: "+msg)
				}
			})
			return exit.New(runDemo(ctx, s, sim.Options{Variant: v, Copies: copies}, opts, asJSON, cmd.OutOrStdout()))
		},
	}
	cmd.Flags().Var(newRange(&copies, "copies", sim.DefaultCopies, sim.MinCopies, sim.MaxCopies), "copies",
		fmt.Sprintf("simultaneous copies, for concurrent-copies (%d to %d)", sim.MinCopies, sim.MaxCopies))
	addVariantFlag(cmd, &variant)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// runDemo runs scenario s headless on a throwaway PostgreSQL (opts) and
// prints the report to stdout: one JSON object with asJSON, a few lines
// otherwise. It returns 0 when the run completed (whatever its invariants
// say), 1 with the error when it could not run, and 128 + the signal (130
// for Ctrl-C) when interrupted, having removed what it made.
func runDemo(ctx context.Context, s *sim.Scenario, so sim.Options, opts pgtemp.Options, asJSON bool, stdout io.Writer) (int, error) {
	ctx, cancel := signalContext(ctx)
	defer cancel()
	srv, err := pgtemp.Start(ctx, opts)
	if ctx.Err() != nil {
		return exitOK, exit.Interrupted(ctx, " while PostgreSQL was starting; nothing is left behind")
	}
	if err != nil {
		return exitFailure, err
	}
	defer srv.Close()
	run, err := s.Prepare(ctx, live.Database(srv), so)
	if err != nil {
		return exitFailure, err
	}
	rep, err := run.Execute(ctx)
	if cerr := run.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if ctx.Err() != nil {
		return exitOK, exit.Interrupted(ctx, fmt.Sprintf(": scenario %s did not finish; its tables and PostgreSQL are removed", s.Name))
	}
	if err != nil {
		return exitFailure, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return exitOK, enc.Encode(rep)
	}
	printReport(stdout, s, rep)
	return exitOK, nil
}

// printReport writes a report for a person: what the run was, what the
// browser saw, what the tables hold, every try, the invariants and the
// verdict.
func printReport(w io.Writer, s *sim.Scenario, rep *sim.Report) {
	fmt.Fprintf(w, "%s (%s): %s\n", s.Title, rep.Variant, s.Explain(rep.Variant))
	fmt.Fprintf(w, "  answers that reached the browser: %s\n", answersText(rep))
	fmt.Fprintf(w, "  answers lost on the way: %d\n", rep.Lost)
	fmt.Fprintf(w, "  booking rows: %d\n", rep.BookingRows)
	fmt.Fprintf(w, "  seats taken: %d\n", rep.SeatsTaken)
	for _, in := range rep.Attempts {
		name := fmt.Sprintf("intent %d", in.Intent)
		if in.Copy > 0 {
			name += fmt.Sprintf(" copy %d", in.Copy)
		}
		var tries []string
		for _, t := range in.Tries {
			got := t.Error
			if got == "" {
				got = fmt.Sprint(t.Status)
				if t.BookingID != "" {
					got += " " + t.BookingID
				}
				if t.Replayed {
					got += " (replay)"
				}
			}
			tries = append(tries, fmt.Sprintf("try %d → %s: %s", t.Try, t.Instance, got))
		}
		fmt.Fprintf(w, "  %s (key %s…): %s\n", name, in.Key[:8], strings.Join(tries, "; "))
	}
	fmt.Fprintln(w, "  invariants:")
	for _, inv := range rep.Invariants {
		mark := "ok    "
		if !inv.Pass {
			mark = "BROKEN"
		}
		fmt.Fprintf(w, "    %s %s (%s)\n", mark, inv.Name, inv.Detail)
	}
	printVerdict(w, rep.Verdict)
}

// printVerdict writes what the run means: ✓ and the guarantee that held, or
// ✗ and the consequence, then the diagnosis in the lesson's Break-it
// columns.
func printVerdict(w io.Writer, v *sim.Verdict) {
	if v == nil {
		return
	}
	mark := "✓"
	if !v.Held {
		mark = "✗"
	}
	fmt.Fprintf(w, "  verdict: %s %s\n", mark, v.Says)
	if d := v.Diagnosis; d != nil {
		fmt.Fprintf(w, "    symptom:       %s\n", d.Symptom)
		fmt.Fprintf(w, "    cause:         %s\n", d.Cause)
		fmt.Fprintf(w, "    where to look: %s\n", d.Where)
		fmt.Fprintf(w, "    fix:           %s\n", d.Fix)
	}
}

func answersText(r *sim.Report) string {
	return fmt.Sprintf("%d: %s", len(r.Answers), sim.GroupAnswers(r.Answers, true))
}
