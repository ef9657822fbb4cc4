package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
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
	cfg := serve.Config{Drain: serve.Drain, Limits: api.WorkshopLimits(),
		Download: func(say func(string)) func(pgtemp.DownloadProgress) { return headless.NewDownloadLines(say).Update }}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the booking API for curl: N API instances behind a round-robin front door",
		Long: "Run the booking API on a throwaway PostgreSQL for a workshop to curl: N API instances on loopback ports of their own, behind a round-robin front door at --addr. " +
			"It prints the demo users' tokens and curl commands to paste, and logs every request to standard error (the replays at debug level). " +
			fmt.Sprintf("Every connection has limits (%s for the headers, %s for the whole request, %s for the answer, %s idle, %d at once; %s to get a database connection and %s for the event's row lock, the whole wait however many queue for it, then 503 with Retry-After), so slow or idle clients cannot hold it. ",
				cfg.Limits.ReadHeader, cfg.Limits.Read, cfg.Limits.Write, cfg.Limits.Idle, cfg.Limits.MaxConns, cfg.Limits.DBWait, cfg.Limits.LockWait) +
			fmt.Sprintf("Ctrl-C, SIGTERM or SIGHUP stop it within %s: requests in flight get %s to finish, the rest are cut, the database is removed, and it exits 0 (1 if something could not be removed). A PostgreSQL that no longer answers is stopped by force, which can take 5s more. ", serve.StopWithin, serve.Drain) +
			"Should learn's own PostgreSQL exit (killed, a full disk), it says so at once with the end of PostgreSQL's log, answers 503 database_down meanwhile, and starts it again on the same data; one that cannot start again ends it with exit 1.",
		Example: "learn serve\nlearn serve --instances 2 --addr 127.0.0.1:8080\nlearn serve --seats 3   # sold out after a few bookings\nlearn serve 2>&1 | grep replayed",
		Args:    noArgs("serve"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := g.options(cmd)
			if err != nil {
				return err
			}
			return exit.New(serve.Run(cmd.Context(), cfg, opts, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	cmd.Flags().Var(newAddr(&cfg.Addr, "addr", serve.DefaultAddr, "e.g. "+serve.DefaultAddr+", or 127.0.0.1:0 for any free port"), "addr",
		"address of the front door (127.0.0.1:0 for any free port)")
	cmd.Flags().Var(newRange(&cfg.Instances, "instances", 1, 1, serve.MaxInstances), "instances",
		fmt.Sprintf("how many API instances behind the front door (1 to %d)", serve.MaxInstances))
	cmd.Flags().Var(newRange(&cfg.Seats, "seats", serve.DefaultSeats, 1, serve.MaxSeats), "seats",
		fmt.Sprintf("seats of the event (1 to %d)", serve.MaxSeats))
	return cmd
}
