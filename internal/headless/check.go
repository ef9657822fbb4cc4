package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/sim/check"
)

// Check runs learn check's scenarios against the API cfg describes and
// prints a line per scenario as it ends (or, with asJSON, one JSON object
// at the end). It returns 1 when a scenario failed, 0 otherwise (a row
// not checked or not run is said, and is no failure), and 128 + the
// signal when interrupted. show, when set, is given the finished result
// after the summary is printed (the scorecard screen, in a terminal).
func Check(ctx context.Context, cfg *check.Config, opts check.Options, asJSON bool, stdout io.Writer, show func(context.Context, *check.Result) error) (int, error) {
	ctx, cancel := signalContext(ctx)
	defer cancel()
	if !asJSON {
		fmt.Fprintf(stdout, "learn check: %s %s at %s, through learn's lossy proxy\n\n", cfg.Request.Method, cfg.Request.Path, strings.Join(cfg.URLs, " and "))
		opts.Done = func(row check.Row) { printCheckRow(stdout, row) }
	}
	res, err := check.Run(ctx, cfg, opts)
	if ctx.Err() != nil {
		return exit.OK, exit.Interrupted(ctx, ": the check did not finish; learn's proxies are closed")
	}
	if err != nil {
		return exit.Failure, err
	}
	code := exit.OK
	if res.Failed > 0 || res.Passed == 0 {
		code = exit.Failure // a check in which nothing held is no pass in CI
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return code, enc.Encode(res)
	}
	fmt.Fprintf(stdout, "\n%s (took %s)\n", res.Summary, res.Took)
	fmt.Fprintf(stdout, "%s\n", res.CannotSee)
	if show != nil {
		if err := show(ctx, res); err != nil {
			return exit.Failure, err
		}
		if ctx.Err() != nil {
			return exit.OK, exit.Interrupted(ctx, " while the scorecard was on screen")
		}
	}
	return code, nil
}

// printCheckRow writes one row for a person: its mark, title and verdict,
// and under a failure the invariants that failed.
func printCheckRow(w io.Writer, row check.Row) {
	fmt.Fprintf(w, "  %s %-44s %s\n", row.State.Mark(), row.Title, check.Printable(row.Says))
	if row.Report == nil || row.Power { // the power row's failures are the ones it must see
		return
	}
	for _, inv := range row.Report.Verdict.Failed {
		fmt.Fprintf(w, "      failed: %s (%s)\n", inv.Name, check.Printable(inv.Detail))
	}
}
