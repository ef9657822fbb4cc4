package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/check"
)

// CheckLine is learn check's command line as cobra parsed it, what
// [CheckSetup] reads.
type CheckLine struct {
	// BookingURLs are the arguments: none, or the booking URLs of one or
	// two API instances.
	BookingURLs []string
	// ConfigFile is --config; "" is the example's config.
	ConfigFile string
	// Only is --only; OnlyGiven says the flag was given, even empty.
	Only      []string
	OnlyGiven bool
	// Copies is --copies, 0 for the default; CopiesGiven says it was
	// given.
	Copies      int
	CopiesGiven bool
	// DatabaseURL is check's own --database-url: the checked API's
	// database.
	DatabaseURL string
	// PostgresGiven says --postgres was given, which learn check refuses:
	// it starts no PostgreSQL.
	PostgresGiven bool
}

// CheckSetup is the config and the options of learn check's command line
// l, or why learn check cannot take it: the error is a usage error's
// message, which says what to give instead (the caller makes it the usage
// error of its command). It reads the config file (a regular file of at
// most 1 MiB) and runs nothing.
func CheckSetup(l CheckLine) (*check.Config, check.Options, error) {
	names := strings.Join(check.Names(), ", ")
	switch {
	case l.PostgresGiven:
		return nil, check.Options{}, errors.New("--postgres: learn check starts no PostgreSQL; it reads the checked API's own database, given with --database-url")
	case l.OnlyGiven && len(l.Only) == 0:
		return nil, check.Options{}, fmt.Errorf("--only: give the scenarios to run, comma-separated: %s", names)
	case len(l.BookingURLs) == 0 && l.ConfigFile == "":
		return nil, check.Options{}, errors.New("give the API: learn check --config check.toml (learn check --init writes one), or learn check http://127.0.0.1:8080/bookings for learn serve's shape")
	}
	for _, name := range l.Only {
		if !slices.Contains(check.Names(), name) {
			return nil, check.Options{}, fmt.Errorf("--only: learn check has no scenario %q; its scenarios are %s", name, names)
		}
	}
	if (l.Copies != 0 || l.CopiesGiven) && (l.Copies < sim.MinCopies || l.Copies > sim.MaxCopies) {
		return nil, check.Options{}, fmt.Errorf("--copies must be from %d to %d, got %d", sim.MinCopies, sim.MaxCopies, l.Copies)
	}
	if l.CopiesGiven && len(l.Only) > 0 && !slices.Contains(l.Only, "concurrent-copies") {
		return nil, check.Options{}, errors.New("--copies is how many copies concurrent-copies sends, and --only leaves it out: add it to --only, or leave --copies out")
	}
	cfg, err := checkConfig(l.ConfigFile, l.BookingURLs)
	if err != nil {
		return nil, check.Options{}, err
	}
	if cfg.Database != nil && l.DatabaseURL == "" {
		return nil, check.Options{}, errors.New("the config has a [database] table: give the API's database with --database-url URL")
	}
	if l.DatabaseURL != "" {
		if _, err := pgx.ParseConfig(l.DatabaseURL); err != nil {
			return nil, check.Options{}, fmt.Errorf("--database-url: %w", err)
		}
		if cfg.Database == nil {
			return nil, check.Options{}, errors.New("--database-url is for the config's [database] table, which it has not: add one (learn check --init shows it), or leave the flag out")
		}
	}
	return cfg, check.Options{Copies: l.Copies, DatabaseURL: l.DatabaseURL, Only: l.Only}, nil
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
