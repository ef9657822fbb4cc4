package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/headless"
	"github.com/learn-idempotency/learn/internal/ui/pages/checkcard"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/check"
)

// checkCmd is learn check: the lesson's scenarios that an HTTP client can
// run, against any booking API, through learn's lossy proxy.
func checkCmd(g *globals) *cobra.Command {
	var configFile string
	var only []string
	var initConfig, asJSON, plain bool
	var copies int
	var databaseURL string
	cmd := &cobra.Command{
		Use:   "check [BOOKING-URL [BOOKING-URL]]",
		Short: "Run the lesson's scenarios against any HTTP booking API",
		Long: "learn check runs the lesson's scenarios that an HTTP client can run against a booking API, yours or learn serve's: a lost answer and its retry, N copies at once, the same key with another quantity, the last seats, a retry after a sell-out, two users with one key, a 502 after the booking, a retry on another API instance, and a client that makes a new key per try (which must book twice: the check's own power). Every request goes through a real proxy of learn's on loopback, which delivers it and drops the answer, answers 502 in its place, or sends copies by last-byte sync; the bookings and seats are read back by GET (or SQL against the API's database, --database-url), and each verdict comes from the same invariants as the lab's.\n\n" +
			"The config (TOML) says what a booking request of the API looks like: learn check --init writes a commented one for learn serve. Without --config, the booking URLs given are learn serve's shape (the example's); with --config, they replace its urls and request.path.\n\n" +
			"In a terminal, the scorecard screen opens once the rows are printed: Enter on a row shows its sequence, every request the proxy carried and what came back (--plain: the rows only).\n\n" +
			"Exit 0 when no scenario failed, 1 when one did (run it in CI against a staging API), 2 for a config or command line it cannot use. A scenario the API cannot be given (two base URLs, an event of its own) is \"not run\"; what the config gives no way to read is \"not checked\", never ✓.\n\n" +
			"Scenarios: " + strings.Join(check.Names(), ", "),
		Example: "learn check --init > check.toml\nlearn check --config check.toml\nlearn check http://127.0.0.1:8080/bookings\nlearn check --config check.toml --json --only lost-answer,concurrent-copies",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 2 {
				return usageErrorf(cmd, "check takes one booking URL, or two of two API instances, got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if initConfig {
				if len(args) > 0 || configFile != "" {
					return usageErrorf(cmd, "--init writes the example config and takes no URL or --config")
				}
				_, err := fmt.Fprint(cmd.OutOrStdout(), check.Example)
				return err
			}
			cfg, opts, err := headless.CheckSetup(headless.CheckLine{
				BookingURLs: args, ConfigFile: configFile,
				Only: only, OnlyGiven: cmd.Flags().Changed("only"),
				Copies: copies, CopiesGiven: cmd.Flags().Changed("copies"),
				DatabaseURL: databaseURL, PostgresGiven: cmd.Flags().Changed("postgres"),
			})
			if err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			var show func(context.Context, *check.Result) error
			if in, out, ok := terminal(cmd); ok && !asJSON && !plain && os.Getenv("TERM") != "dumb" {
				show = func(ctx context.Context, res *check.Result) error {
					interrupted, err := checkcard.Run(ctx, res, strings.Join(cfg.URLs, " and "), in, out)
					if interrupted {
						return exit.Interrupted(ctx, " on the scorecard")
					}
					return err
				}
			}
			return exit.New(headless.Check(cmd.Context(), cfg, opts, asJSON, cmd.OutOrStdout(), show))
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "the config of the API (TOML); learn check --init writes one")
	cmd.Flags().BoolVar(&initConfig, "init", false, "print a commented example config for learn serve, and exit")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object: every scenario with its verdict, tries and the proxy's passages")
	// The API's own database: a flag of check's, in place of the global
	// --database-url (learn's throwaway PostgreSQL, which check does not
	// start).
	cmd.Flags().StringVar(&databaseURL, "database-url", "", "the checked API's own database, for the config's [database] SQL (read only: learn check only runs those queries)")
	// learn check starts no PostgreSQL: a hidden flag of its own in place
	// of the global --postgres keeps it out of the help and refuses it.
	cmd.Flags().String("postgres", "", "")
	_ = cmd.Flags().MarkHidden("postgres")
	cmd.Flags().BoolVar(&plain, "plain", false, "print the rows only, without the scorecard screen that opens in a terminal")
	cmd.Flags().IntVar(&copies, "copies", 0, fmt.Sprintf("copies sent at once by concurrent-copies (%d to %d; default %d)", sim.MinCopies, sim.MaxCopies, sim.DefaultCopies))
	cmd.Flags().StringSliceVar(&only, "only", nil, "run only these scenarios (comma-separated)")
	_ = cmd.RegisterFlagCompletionFunc("only", cobra.FixedCompletions(check.Names(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// terminal is the command's standard input and output when both are a
// terminal.
func terminal(cmd *cobra.Command) (*os.File, *os.File, bool) {
	in, ok1 := cmd.InOrStdin().(*os.File)
	out, ok2 := cmd.OutOrStdout().(*os.File)
	if !ok1 || !ok2 || !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
		return nil, nil, false
	}
	return in, out, true
}
