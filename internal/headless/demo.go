package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
)

// Demo runs scenario s headless on a throwaway PostgreSQL (opts) and
// prints the report to stdout: one JSON object with asJSON, a few lines
// otherwise. It returns 0 when the run completed (whatever its invariants
// say), 1 with the error when it could not run, and 128 + the signal (130
// for Ctrl-C) when interrupted, having removed what it made.
func Demo(ctx context.Context, s *sim.Scenario, so sim.Options, opts pgtemp.Options, asJSON bool, stdout io.Writer) (int, error) {
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
	run, err := s.Prepare(ctx, live.Database(srv), so)
	if err != nil {
		return exit.Failure, err
	}
	rep, err := run.Execute(ctx)
	if cerr := run.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if ctx.Err() != nil {
		return exit.OK, exit.Interrupted(ctx, fmt.Sprintf(": scenario %s did not finish; its tables and PostgreSQL are removed", s.Name))
	}
	if err != nil {
		return exit.Failure, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return exit.OK, enc.Encode(rep)
	}
	printReport(stdout, s, rep)
	return exit.OK, nil
}

// signalContext is ctx with a cancel function of its own. The signals
// themselves are caught once for the whole process (exit.RootContext,
// which main makes), so ctx, derived from it, ends with an exit.Signalled
// cause on Ctrl-C (SIGINT), SIGTERM or SIGHUP; exit.Interrupted then says
// what it stopped.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	return ctx, func() { cancel(context.Canceled) }
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
			with := ""
			if t.Key != "" && t.Key != in.Key && len(t.Key) >= 8 {
				with = fmt.Sprintf(" with a NEW key %s…", t.Key[:8]) // the client changed it
			}
			tries = append(tries, fmt.Sprintf("try %d%s → %s: %s", t.Try, with, t.Instance, got))
		}
		fmt.Fprintf(w, "  %s (key %s…): %s\n", name, in.Key[:8], strings.Join(tries, "; "))
	}
	if sp := sim.RetrySpread(rep); sp.Retries >= sim.SpreadShown {
		// Many retries: when they left, on their clients' clocks.
		fmt.Fprintf(w, "  retries per 100 ms (%s):\n", sp.Says())
		for _, bar := range sp.Bars() {
			fmt.Fprintf(w, "    %s\n", bar)
		}
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
