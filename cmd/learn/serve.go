package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/flagval"
	"github.com/learn-idempotency/learn/internal/headless"
	"github.com/learn-idempotency/learn/internal/serve"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim/api"
)

// headerInstance is set by every API instance on its answers: the
// API instance that handled the request, e.g. "api-2".
const headerInstance = api.HeaderInstance

// serveCmd is learn serve: the booking API for a workshop to curl.
func serveCmd(g *globals) *cobra.Command {
	var sets []string
	var variant string
	cfg := serve.Config{Drain: serve.Drain, Limits: api.WorkshopLimits(),
		Download: func(say func(string)) func(pgtemp.DownloadProgress) { return headless.NewDownloadLines(say).Update }}
	cmd := &cobra.Command{
		Use:   "serve [SCENARIO]",
		Short: "Run the booking API for curl: N API instances behind a round-robin front door",
		Long: "Run the booking API on a throwaway PostgreSQL for a workshop to curl: N API instances on loopback ports of their own (or the --instance-addr given), behind a round-robin front door at --addr. " +
			"It prints the demo users' tokens and curl commands to paste, and logs every request to standard error (the replays at debug level). " +
			fmt.Sprintf("Every connection has limits (%s for the headers, %s for the whole request, %s for the answer, %s idle, %d at once; %s to get a database connection and %s for the event's row lock, the whole wait however many queue for it, then 503 with Retry-After), so slow or idle clients cannot hold it. ",
				cfg.Limits.ReadHeader, cfg.Limits.Read, cfg.Limits.Write, cfg.Limits.Idle, cfg.Limits.MaxConns, cfg.Limits.DBWait, cfg.Limits.LockWait) +
			fmt.Sprintf("Ctrl-C, SIGTERM or SIGHUP stop it within %s: requests in flight get %s to finish, the rest are cut, the database is removed, and it exits 0 (1 if something could not be removed). A PostgreSQL that no longer answers is stopped by force, which can take 5s more. ", serve.StopWithin, serve.Drain) +
			"Should learn's own PostgreSQL exit (killed, a full disk), it says so at once with the end of PostgreSQL's log, answers 503 database_down meanwhile, and starts it again on the same data; one that cannot start again ends it with exit 1.",
		Example: "learn serve\nlearn serve --instances 2 --addr 127.0.0.1:8080\nlearn serve --seats 3   # sold out after a few bookings\nlearn serve 2>&1 | grep replayed\n" +
			"learn serve --set lookup=after-seat-check   # a broken design to practise a client against\nlearn serve --variant broken last-seats     # the design a scenario's broken variant runs\n" +
			"learn serve --instances 2 --instance-addr 127.0.0.1:8081 --instance-addr 127.0.0.1:8082",
		ValidArgsFunction: completeOne(scenarioList()),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf(cmd, "serve takes at most one scenario name, whose design it serves (with --variant broken, its broken design); got %s", strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := serveDesign(cmd, &cfg, sets, variant, args); err != nil {
				return err
			}
			if err := serve.CheckInstanceAddrs(cfg, cmd.Flags().Changed("instances")); err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			opts, err := g.options(cmd)
			if err != nil {
				return err
			}
			return exit.New(serve.Run(cmd.Context(), cfg, opts, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	cmd.Flags().Var(flagval.NewAddr(&cfg.Addr, "addr", serve.DefaultAddr, "e.g. "+serve.DefaultAddr+", or 127.0.0.1:0 for any free port"), "addr",
		"address of the front door (127.0.0.1:0 for any free port)")
	cmd.Flags().Var(flagval.NewRange(&cfg.Instances, "instances", 1, 1, serve.MaxInstances), "instances",
		fmt.Sprintf("how many API instances behind the front door (1 to %d)", serve.MaxInstances))
	cmd.Flags().Var(flagval.NewRange(&cfg.Seats, "seats", serve.DefaultSeats, 1, serve.MaxSeats), "seats",
		fmt.Sprintf("seats of the event (1 to %d)", serve.MaxSeats))
	cmd.Flags().StringArrayVar(&sets, "set", nil, "serve a design of the lab: name=value, repeatable (the server's switches: lookup, lock, constraint, compare, store, expiry, isolation, on-40001, in-flight; see learn lab --help)")
	cmd.Flags().StringVar(&variant, "variant", "correct", "with a scenario name: correct or broken, the design that variant runs")
	cmd.Flags().StringArrayVar(&cfg.InstanceAddrs, "instance-addr", nil, "address of an API instance, repeatable: one per instance (default: free loopback ports)")
	return cmd
}

// serveDesign sets cfg's design from --set, or from the scenario named in
// args and --variant (serve.SwitchesDesign, serve.ScenarioDesign).
func serveDesign(cmd *cobra.Command, cfg *serve.Config, sets []string, variant string, args []string) error {
	switch {
	case len(sets) > 0 && len(args) > 0:
		return usageErrorf(cmd, "serve a scenario's design or a design of --set, not both")
	case len(args) == 0 && cmd.Flags().Changed("variant"):
		return usageErrorf(cmd, "--variant needs a scenario name: learn serve SCENARIO --variant broken (those whose broken design is the server's: %s)", serve.BrokenScenarios())
	case len(args) > 0:
		s, v, err := lookupScenario(cmd, args[0], variant)
		if err == nil {
			err = serve.ScenarioDesign(cfg, s, v, cmd.Flags().Changed("instances"))
		}
		return usageOf(cmd, err)
	}
	return usageOf(cmd, serve.SwitchesDesign(cfg, sets))
}
