package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/doctor"
	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/headless"
	"github.com/learn-idempotency/learn/pgtemp"
)

// doctorCmd is learn doctor.
func doctorCmd(g *globals) *cobra.Command {
	var clean bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check each way to get a PostgreSQL here, and say which one learn uses and why",
		Long: "For each way learn can get a PostgreSQL (a database URL, local binaries, Docker, PostgreSQL downloaded once into the user cache directory), say what this machine has for it and whether it works, having started it, used it and removed it; then which way learn would use and why, and the fixes that fit this machine when it does not work. " +
			"Leftovers of learn runs that were killed (clusters, containers, interrupted template copies, and schemas in the database of a URL) are removed first; a schema whose learn cannot be checked from here (another host, before a restart) is listed with the statement that drops it, never dropped. Exit 0 when the way learn would use works, 1 when it does not.",
		Example: "learn doctor\nlearn doctor --postgres docker\nlearn doctor --database-url postgres://me@localhost/learn\nlearn doctor --clean-cache",
		Args:    noArgs("doctor"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := g.options(cmd)
			if err != nil {
				return err
			}
			if clean {
				return exit.New(doctor.CleanCache(cmd.OutOrStdout()))
			}
			return exit.New(doctor.Run(cmd.Context(), opts, doctor.SourcesOf(cmd.Flags().Changed("database-url"), cmd.Flags().Changed("postgres"), g.databaseURL), cmd.OutOrStdout(), func(w io.Writer, prefix string) func(pgtemp.DownloadProgress) {
				return headless.NewDownloadReport(w, prefix).Update
			}))
		},
	}
	cmd.Flags().BoolVar(&clean, "clean-cache", false, "remove learn's cache (the downloaded PostgreSQL, the cluster templates) and check nothing; the next start downloads or runs initdb again")
	return cmd
}
