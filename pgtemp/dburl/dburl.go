// Package dburl is the URL way: an existing database named by
// --database-url or DATABASE_URL, in which learn works only inside schemas
// learn_<random> that it creates (pgtemp's NewSchema) and drops.
//
//   - [Way] implements way.Way: Start connects (waiting while the server
//     has no free connection), reaps the schemas of killed learn processes
//     and describes the server; Inspect names it without the password.
//   - [ParseURL] reads a URL as pgx does, without pgxpool's settings of a
//     pool and without ever quoting the password in an error;
//     [ConnectError] says why a connection failed in one line.
//   - schemas.go: [ReapSchemas], which drops the schemas whose owner
//     record (package owner) names a learn process that is gone.
package dburl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/internal/pgwait"
	"github.com/learn-idempotency/learn/pgtemp/internal/pgsql"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// Way is the URL way.
type Way struct{}

var _ way.Way = Way{}

// ErrNoURL is Start's error without a URL.
var ErrNoURL = errors.New("database mode url needs a database: set DATABASE_URL or pass --database-url")

// Start checks that the user's database (env.DatabaseURL) answers, drops
// the schemas that learn processes killed outright left in it
// (ReapSchemas), and describes it. It creates nothing: schemas come from
// pgtemp's NewSchema.
func (Way) Start(ctx context.Context, env *way.Env) (*way.Instance, error) {
	if env.DatabaseURL == "" {
		return nil, ErrNoURL
	}
	cfg, err := ParseURL(env.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > urlConnectTimeout {
		cfg.ConnectTimeout = urlConnectTimeout
	}
	where := pgsql.Address(cfg)
	env.Log("connecting to the PostgreSQL at %s…", where)
	// A statement of learn's that another session holds up (a lock on a
	// catalog) is said as it waits, with who holds it: to the caller's
	// teller, or as a progress line.
	if !pgwait.Traced(ctx) {
		ctx = pgwait.WithTrace(ctx, func(msg string) {
			if msg != "" {
				env.Log("%s", msg)
			}
		})
	}

	conn, err := pgsql.ConnectWaiting(ctx, cfg, pgsql.ConnWait)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, ConnectError(where, cfg.Password, err)
	}
	defer conn.Close(context.Background())
	var version, db, user string
	// Even this query reads catalogs (to resolve its functions), which a
	// lock held on one (pg_namespace, say) holds up.
	stop := pgwait.Watch(ctx, cfg, conn.PgConn().PID(), "learn's first query to the PostgreSQL at "+where)
	err = conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_database(), current_user").
		Scan(&version, &db, &user)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the PostgreSQL at %s did not answer a query: %s; check DATABASE_URL / --database-url",
			where, pgsql.Scrub(err.Error(), cfg.Password))
	}
	// Schemas of learn processes that were killed outright go first, as
	// the clusters of local mode do. Failing to drop one is no reason not
	// to start.
	if _, err := reapSchemas(ctx, conn, env.Logf); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		env.Log("%v", err)
	}
	inst := &way.Instance{
		ConnString: env.DatabaseURL,
		Config:     cfg,
		Describe: fmt.Sprintf("PostgreSQL %s at %s, database %s as user %s (learn uses only schemas learn_* it creates)",
			version, where, db, user),
		Close: func() error { return nil },
	}
	env.Log("connected to PostgreSQL %s in %s", version, time.Since(env.Started).Round(time.Millisecond))
	return inst, nil
}

// Inspect names the server, database and user of the URL (never its
// password); without a URL the way is Missing.
func (Way) Inspect(_ context.Context, env *way.Env) (in way.Inspection) {
	if env.DatabaseURL == "" {
		in.Err = errors.New("not set")
		in.Missing = true
		return in
	}
	in.Available = true
	cfg, err := ParseURL(env.DatabaseURL)
	if err != nil {
		return in // Start says what is wrong with it, without quoting it
	}
	in.Details = append(in.Details, fmt.Sprintf("server %s, database %s, user %s (the password is not shown)",
		pgsql.Address(cfg), cfg.Database, cfg.User))
	return in
}

// urlConnectTimeout bounds each connection attempt to a user's database, so an
// unreachable host is reported in seconds rather than after TCP gives up.
const urlConnectTimeout = 5 * time.Second

// errUnreadableURL is the error for a connection string pgx cannot parse.
// pgx's own message quotes the string, which may hold a password.
var errUnreadableURL = errors.New("DATABASE_URL / --database-url is not a PostgreSQL connection string learn can read " +
	"(details left out because they may contain the password); write it as " +
	"postgres://user:password@host:5432/dbname or host=… port=… user=… dbname=…")

// ParseURL reads a database URL (or keyword/value string) as pgx reads it,
// with pgxpool's settings of a pool (pgxpool.ParseConfig) taken off the
// session's: pgx alone would send pool_max_conn_lifetime=1h to PostgreSQL
// as a setting of the session, and the server refuses the connection.
// learn's pools take the timing ones (pool_max_conn_lifetime,
// pool_max_conn_lifetime_jitter, pool_max_conn_idle_time,
// pool_health_check_period, pool_ping_timeout), each checked here; the
// sizes (pool_max_conns, pool_min_conns, pool_min_idle_conns) are refused
// by name, since learn sizes a pool for each run itself. An error never
// quotes the string, which may hold a password.
func ParseURL(connString string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, errUnreadableURL
	}
	for _, k := range []string{"pool_max_conns", "pool_min_conns", "pool_min_idle_conns"} {
		if _, ok := cfg.RuntimeParams[k]; ok {
			return nil, fmt.Errorf("DATABASE_URL / --database-url sets %s, the size of one pgx pool: learn opens pools of its own for each run and sizes each for what the run holds at once (a race of 100 copies holds 103 connections), so it takes no size from the URL; remove pool_max_conns, pool_min_conns and pool_min_idle_conns from it (PostgreSQL's max_connections, or a role's CONNECTION LIMIT, bounds what learn may hold; `learn workshop --connections` shares a part of it)", k)
		}
	}
	for _, k := range []string{"pool_max_conn_lifetime", "pool_max_conn_lifetime_jitter", "pool_max_conn_idle_time", "pool_health_check_period", "pool_ping_timeout"} {
		if v, ok := cfg.RuntimeParams[k]; ok {
			if _, err := time.ParseDuration(v); err != nil {
				return nil, fmt.Errorf("DATABASE_URL / --database-url sets %s to %q, which is not a duration: write it as Go writes durations, such as 30m or 1h30m", k, v)
			}
		}
	}
	pc, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, errUnreadableURL
	}
	return pc.ConnConfig, nil
}

// The SQLSTATEs of a setting of the session that the server refused at
// connect time: no such setting, a value it does not take, one that may
// not be set then (or by this user).
const (
	undefinedObject        = "42704"
	invalidParameterValue  = "22023"
	cantChangeRuntimeParam = "55P02"
)

// ConnectError explains a failed connection: unreachable, or reached and
// refused (wrong password, no such database…).
func ConnectError(where, password string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgsql.TooManyClients {
		return fmt.Errorf("the PostgreSQL at %s has no free connection for learn: %s (SQLSTATE %s), still after %s; other clients hold every connection it allows (its max_connections, or a CONNECTION LIMIT of the role or the database): end other learn runs or programs using it and try again, or raise max_connections",
			where, pgsql.Scrub(pgErr.Message, password), pgErr.Code, pgsql.ConnWait)
	}
	if errors.As(err, &pgErr) && (pgErr.Code == undefinedObject || pgErr.Code == invalidParameterValue || pgErr.Code == cantChangeRuntimeParam) {
		// A parameter of the URL that pgx does not know itself goes to
		// the server as a setting of the session, and this one it refused.
		return fmt.Errorf("the PostgreSQL at %s refused learn: %s (SQLSTATE %s); a parameter of DATABASE_URL / --database-url (or a -c setting of its options=) that is not pgx's own is sent to PostgreSQL as a setting of the session, and this one PostgreSQL does not take: remove it from the URL, or correct its value",
			where, pgsql.Scrub(pgErr.Message, password), pgErr.Code)
	}
	if errors.As(err, &pgErr) {
		return fmt.Errorf("the PostgreSQL at %s refused learn: %s (SQLSTATE %s); check the user, password and database in DATABASE_URL / --database-url",
			where, pgsql.Scrub(pgErr.Message, password), pgErr.Code)
	}
	cause := err
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && ce.Unwrap() != nil {
		cause = ce.Unwrap() // drop pgx's "failed to connect to `user=… database=…`" prefix
	}
	var opErr *net.OpError
	if errors.As(cause, &opErr) {
		cause = opErr
	}
	return fmt.Errorf("could not reach the PostgreSQL at %s: %s; check DATABASE_URL / --database-url",
		where, pgsql.Scrub(oneLine(cause.Error()), password))
}

// oneLine joins the lines of msg with "; ", each line once: pgx joins the
// errors of every attempt (a host's addresses, TLS then plain) with
// newlines, and the same lookup error can come twice.
func oneLine(msg string) string {
	var lines []string
	for l := range strings.SplitSeq(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(lines, l) && !strings.HasSuffix(strings.Join(lines, "; "), l) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}
