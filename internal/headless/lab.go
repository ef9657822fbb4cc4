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

// Lab runs every scenario under design on a throwaway PostgreSQL (opts)
// and prints the scorecard: one JSON object with asJSON, a line a scenario
// otherwise. It returns 0 when the scorecard is complete (whatever its
// verdicts), 1 when PostgreSQL could not be had, and 128 + the signal when
// interrupted, having removed what it made.
func Lab(ctx context.Context, design sim.Switches, opts pgtemp.Options, asJSON bool, stdout io.Writer) (int, error) {
	ctx, cancel := signalContext(ctx)
	defer cancel()
	db := live.Launch(opts)
	defer db.Close()
	if _, err := db.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return exit.OK, exit.Interrupted(ctx, " while PostgreSQL was starting; nothing is left behind")
		}
		return exit.Failure, err
	}
	runs := live.NewRuns(ctx, db)
	card := runs.Lab(ctx, design, nil)
	runs.Close()
	if ctx.Err() != nil {
		return exit.OK, exit.Interrupted(ctx, ": the scorecard is not complete; its tables and PostgreSQL are removed")
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return exit.OK, enc.Encode(card)
	}
	printScorecard(stdout, card)
	return exit.OK, nil
}

// printScorecard writes a scorecard for a person.
func printScorecard(w io.Writer, card sim.Scorecard) {
	fmt.Fprintf(w, "Design: %s\n", card.Design)
	for _, na := range card.NotApplying {
		fmt.Fprintf(w, "  %s does not apply: %s\n", na.Switch, na.Why)
	}
	fmt.Fprintln(w)
	for _, r := range card.Scenarios {
		mark := "✓"
		switch {
		case r.Error != "":
			mark = "?"
		case !r.Pass:
			mark = "✗"
		}
		fmt.Fprintf(w, "%s %-22s %s\n", mark, r.Scenario, r.Consequence)
		if len(r.Failed) > 0 {
			fmt.Fprintf(w, "  %-22s broken: %s\n", "", strings.Join(r.Failed, "; "))
		}
	}
	fmt.Fprintf(w, "\n%s\n", card.Summary)
}
