package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/jackc/pgx/v5"
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
			if cmd.Flags().Changed("postgres") {
				return usageErrorf(cmd, "--postgres: learn check starts no PostgreSQL; it reads the checked API's own database, given with --database-url")
			}
			if cmd.Flags().Changed("only") && len(only) == 0 {
				return usageErrorf(cmd, "--only: give the scenarios to run, comma-separated: %s", strings.Join(check.Names(), ", "))
			}
			if len(args) == 0 && configFile == "" {
				return usageErrorf(cmd, "give the API: learn check --config check.toml (learn check --init writes one), or learn check http://127.0.0.1:8080/bookings for learn serve's shape")
			}
			for _, name := range only {
				if !slices.Contains(check.Names(), name) {
					return usageErrorf(cmd, "--only: learn check has no scenario %q; its scenarios are %s", name, strings.Join(check.Names(), ", "))
				}
			}
			if (copies != 0 || cmd.Flags().Changed("copies")) && (copies < sim.MinCopies || copies > sim.MaxCopies) {
				return usageErrorf(cmd, "--copies must be from %d to %d, got %d", sim.MinCopies, sim.MaxCopies, copies)
			}
			if cmd.Flags().Changed("copies") && len(only) > 0 && !slices.Contains(only, "concurrent-copies") {
				return usageErrorf(cmd, "--copies is how many copies concurrent-copies sends, and --only leaves it out: add it to --only, or leave --copies out")
			}
			cfg, err := checkConfig(configFile, args)
			if err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			if cfg.Database != nil && databaseURL == "" {
				return usageErrorf(cmd, "the config has a [database] table: give the API's database with --database-url URL")
			}
			if databaseURL != "" {
				if _, err := pgx.ParseConfig(databaseURL); err != nil {
					return usageErrorf(cmd, "--database-url: %v", err)
				}
				if cfg.Database == nil {
					return usageErrorf(cmd, "--database-url is for the config's [database] table, which it has not: add one (learn check --init shows it), or leave the flag out")
				}
			}
			opts := check.Options{Copies: copies, DatabaseURL: databaseURL, Only: only}
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

// maxConfig is the largest config learn check reads.
const maxConfig = 1 << 20

// readConfig reads the config file, of at most maxConfig bytes.
func readConfig(file string) ([]byte, error) {
	// A FIFO or a device would block the open or the read for as long
	// as its writer likes, past Ctrl-C: only a regular file is read.
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: give the config as a file (learn check --init > check.toml)", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfig+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfig {
		return nil, fmt.Errorf("%s is over 1 MiB: a config of learn check is a page of TOML (learn check --init writes one)", file)
	}
	return data, nil
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

// checkConfig is the config of learn check: the file's, or the
// example's, with the booking URLs given (if any) as its base URLs and
// booking path.
func checkConfig(file string, bookingURLs []string) (*check.Config, error) {
	data := []byte(check.Example)
	if file != "" {
		var err error
		if data, err = readConfig(file); err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
	}
	cfg, err := check.Parse(data)
	if err != nil {
		if file != "" {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return nil, err
	}
	if len(bookingURLs) == 0 {
		return cfg, nil
	}
	cfg.URLs = nil
	for i, raw := range bookingURLs {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			return nil, fmt.Errorf("%q is not a booking URL such as http://127.0.0.1:8080/bookings", raw)
		}
		path := u.Path
		if path == "" || path == "/" {
			path = cfg.Request.Path
		}
		if i > 0 && path != cfg.Request.Path {
			return nil, fmt.Errorf("the two booking URLs have different paths (%s and %s): give two API instances of the same API", cfg.Request.Path, path)
		}
		cfg.Request.Path = path
		cfg.URLs = append(cfg.URLs, u.Scheme+"://"+u.Host)
	}
	return cfg, nil
}
