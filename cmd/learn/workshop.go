package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/flagval"
	"github.com/learn-idempotency/learn/internal/workshop"
)

// The limits of learn workshop's flags.
const (
	workshopMaxAttendees = 1000
	workshopMinCode      = 6
	workshopMinIdle      = time.Second
	// workshopMaxConnections is PostgreSQL's own ceiling of max_connections
	// (guc_tables.c: MAX_BACKENDS, 2^18 - 1).
	workshopMaxConnections = 262143
)

// workshopCmd is learn workshop: learn for a room over SSH.
func workshopCmd(g *globals) *cobra.Command {
	cfg := workshop.Config{}
	var summaryDir string
	cmd := &cobra.Command{
		Use:   "workshop",
		Short: "Run a workshop over SSH: each attendee gets their own learn, your terminal shows the room",
		Long: "Run learn for a room: one throwaway PostgreSQL and an SSH server. Attendees need only an SSH client: they type the ssh line it prints and the join code at the password prompt, " +
			"and get the whole app at their own terminal size and colours, on their own schemas (dropped when they leave), with their progress kept for the workshop (ssh … progress prints it as JSON). " +
			"No shell, no port forwarding, no file transfer.\n\n" +
			"Your terminal becomes the room's dashboard: who is connected and on which screen, the checkpoint and break-it scores, the poll of the open question; o sends everyone to a screen, n steps everyone's play screen. " +
			"Ctrl-C (or SIGTERM) ends the workshop: every attendee is told, every schema dropped, PostgreSQL stopped, and the room's summary written a last time (its path is printed). The summary is kept on disk as JSON from the start, as it changes, so that a crash, kill -9 or power cut loses a second of it at most; the next learn workshop or learn doctor says where one left so is. Without a terminal it runs without the dashboard and logs to standard output.\n\n" +
			"The host key is made once and kept (--host-key), so attendees' known_hosts stay valid from one workshop to the next.",
		Example: "learn workshop\nlearn workshop --addr 0.0.0.0:2222 --code kq7m-3hxt\nlearn workshop --database-url postgres://learn@db.internal/learn --max-attendees 200",
		Args:    noArgs("workshop"),
		// At a terminal the dashboard takes the screen: the supervisor
		// holds standard error until it is back.
		Annotations: fullScreenCmd(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.preview != nil {
				// The supervisor asks what the app would show first: the
				// workshop shows its start, then the dashboard, and runs
				// nothing in the asking process.
				return nil
			}
			opts, err := g.options(cmd)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("code") && len(strings.TrimSpace(cfg.Code)) < workshopMinCode {
				return usageErrorf(cmd, "--code must be at least %d characters: a code the room can guess lets anyone who reaches the port in (leave it out for a generated one)", workshopMinCode)
			}
			cfg.Postgres = opts
			return exit.New(workshop.Run(cmd.Context(), cfg, summaryDir, g.theme, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	f := cmd.Flags()
	f.Var(flagval.NewAddr(&cfg.Addr, "addr", workshop.DefaultAddr, "e.g. "+workshop.DefaultAddr+", 0.0.0.0:2222 for the room's network, or 127.0.0.1:0 for any free port"), "addr", "where the SSH server listens: 127.0.0.1 for a rehearsal on this machine, 0.0.0.0 (or an address of this machine) for the room")
	f.Var(flagval.NewRange(&cfg.MaxAttendees, "max-attendees", workshop.DefaultMaxAttendees, 1, workshopMaxAttendees), "max-attendees",
		fmt.Sprintf("attendees connected at once (1 to %d); PostgreSQL's max_connections is sized for them", workshopMaxAttendees))
	f.StringVar(&cfg.Code, "code", "", "the join code attendees type at the password prompt (default: a new one, printed)")
	f.Var(flagval.NewDuration(&cfg.Idle, "idle", workshop.DefaultIdle, workshopMinIdle), "idle", "end an attendee's session after this long without a key (their progress stays)")
	f.Var(flagval.NewRange(&cfg.Connections, "connections", 0, 0, workshopMaxConnections), "connections", "how many PostgreSQL connections the attendees' runs may hold in all (default: what the server allows); several workshop servers on one --database-url each take their share")
	f.StringVar(&cfg.HostKey, "host-key", "", "the SSH host key's file, made the first time (default: learn's directory under $XDG_DATA_HOME, ~/.local/share/learn)")
	f.StringVar(&summaryDir, "summary-dir", "", "where the room's summary is kept, as it changes and at the end (default: learn's directory under $XDG_STATE_HOME, ~/.local/state/learn/workshops)")
	return cmd
}
