package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/sim/api"
)

// What the engine needs of a PostgreSQL session. A database named by
// --database-url brings its own defaults: the server's, the database's and
// the role's (ALTER … SET), and the -c settings of the URL's options=.
// Some would change what the engine does: a lock_timeout fails the copies
// that queue for the row lock, an idle_in_transaction_session_timeout ends
// a step held for a viewer, exit_on_error ends the session at the unique
// violation the lesson relies on, a default read-only transaction refuses
// every booking. NewStage reads the session's values of these on its
// admin connection and sends the engine's own, as run-time parameters at
// connect time, for each one that differs (PostgreSQL applies them after
// the URL's options and over the role's and the database's settings). A
// setting the server does not know (transaction_timeout before
// PostgreSQL 17) is not sent; one that already has the engine's value is
// not sent either, so a connection pooler that forwards only the
// parameters it tracks (PgBouncer's track_extra_parameters) sees only what
// a server with unusual defaults needs.

// sessionSetting is a setting of the session and the value the engine
// needs, as pg_settings shows it (milliseconds for the timeouts).
type sessionSetting struct{ name, want string }

// sessionSettings are the settings the engine pins on a pool's
// connections: the API instances' under limits, or the admin pool's
// (instances false), whose statements have no limit.
func sessionSettings(l api.ServeLimits, instances bool) []sessionSetting {
	statement := "0"
	if instances && l.LockWait > 0 {
		statement = strconv.FormatInt(l.LockWait.Milliseconds(), 10)
	}
	return []sessionSetting{
		{"default_transaction_isolation", "read committed"},
		{"default_transaction_read_only", "off"},
		// The bound of a wait for the event's row lock is the whole
		// statement's (ServeLimits.LockWait); lock_timeout would bound
		// each lock of the wait apart, and start again at the next.
		{"lock_timeout", "0"},
		{"statement_timeout", statement},
		{"idle_in_transaction_session_timeout", "0"},
		{"transaction_timeout", "0"}, // PostgreSQL 17
		{"exit_on_error", "off"},
	}
}

// instanceSettings are sessionSettings of the API instances' pools of a
// stage of cfg, with the database's default isolation level of its world.
func instanceSettings(cfg StageConfig) []sessionSetting {
	s := sessionSettings(cfg.Limits, true)
	for i := range s {
		if s[i].name == "default_transaction_isolation" {
			s[i].want = strings.ToLower(cfg.DatabaseIsolation.SQL())
		}
	}
	return s
}

// settingNames are the names sessionSettings pins, and the two of the
// server's connection limit (checkLimit).
var settingNames = func() []string {
	names := []string{"max_connections", "superuser_reserved_connections"}
	for _, s := range sessionSettings(api.ServeLimits{}, false) {
		names = append(names, s.name)
	}
	return names
}()

// serverSettings reads, in one round trip on the admin pool, the
// session's values of settingNames that the server knows.
func serverSettings(ctx context.Context, admin *pgxpool.Pool) (map[string]string, error) {
	rows, err := admin.Query(ctx, `SELECT name, setting FROM pg_catalog.pg_settings WHERE name = ANY($1)`, settingNames)
	if err != nil {
		return nil, fmt.Errorf("read the session's settings: %w", err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var name, setting string
		if err := rows.Scan(&name, &setting); err != nil {
			return nil, fmt.Errorf("read the session's settings: %w", err)
		}
		got[name] = setting
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the session's settings: %w", err)
	}
	return got, nil
}

// pinSettings sets on pcfg, as run-time parameters, each of want whose
// value in the session (got) differs, and reports whether it set any.
func pinSettings(pcfg *pgxpool.Config, got map[string]string, want []sessionSetting) bool {
	pinned := false
	for _, s := range want {
		if v, known := got[s.name]; known && v != s.want {
			pcfg.ConnConfig.RuntimeParams[s.name] = s.want
			pinned = true
		}
	}
	return pinned
}
