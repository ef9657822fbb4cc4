package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// urlConnectTimeout bounds each connection attempt to a user's database, so an
// unreachable host is reported in seconds rather than after TCP gives up.
const urlConnectTimeout = 5 * time.Second

// errUnreadableURL is the error for a connection string pgx cannot parse.
// pgx's own message quotes the string, which may hold a password.
var errUnreadableURL = errors.New("DATABASE_URL / --database-url is not a PostgreSQL connection string learn can read " +
	"(details left out because they may contain the password); write it as " +
	"postgres://user:password@host:5432/dbname or host=… port=… user=… dbname=…")

// startURL checks that the user's database answers, drops the schemas that
// learn processes killed outright left in it (reapSchemas), and describes
// it. It creates nothing: schemas come from NewSchema.
func startURL(ctx context.Context, opts *Options, t0 time.Time) (*Server, error) {
	cfg, err := pgx.ParseConfig(opts.DatabaseURL)
	if err != nil {
		return nil, errUnreadableURL
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > urlConnectTimeout {
		cfg.ConnectTimeout = urlConnectTimeout
	}
	where := address(cfg)
	opts.logf("connecting to the PostgreSQL at %s…", where)

	conn, err := connectWaiting(ctx, cfg, connWait)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, connectError(where, cfg.Password, err)
	}
	defer conn.Close(context.Background())
	var version, db, user string
	err = conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_database(), current_user").
		Scan(&version, &db, &user)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the PostgreSQL at %s did not answer a query: %s; check DATABASE_URL / --database-url",
			where, scrub(err.Error(), cfg.Password))
	}
	// Schemas of learn processes that were killed outright go first, as
	// the clusters of local mode do. Failing to drop one is no reason not
	// to start.
	if _, err := reapSchemas(ctx, conn, opts.Logf); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		opts.logf("%v", err)
	}
	s := &Server{
		mode:       URL,
		connString: opts.DatabaseURL,
		cfg:        cfg,
		readyIn:    time.Since(t0),
		describe: fmt.Sprintf("PostgreSQL %s at %s, database %s as user %s (learn uses only schemas learn_* it creates)",
			version, where, db, user),
	}
	opts.logf("connected to PostgreSQL %s in %s", version, s.readyIn.Round(time.Millisecond))
	return s, nil
}

// tooManyClients is the SQLSTATE of a server (or a role, or a database)
// that has no connection left: "sorry, too many clients already".
const tooManyClients = "53300"

// connWait is how long learn waits for a connection while the server
// answers "too many clients": other learn runs on the same server free
// theirs within seconds.
var connWait = 15 * time.Second

// connectWaiting connects, and while the server answers "too many clients"
// tries again with backoff for up to wait; then it returns the last error.
// Any other error, or ctx ending, is returned at once.
func connectWaiting(ctx context.Context, cfg *pgx.ConnConfig, wait time.Duration) (*pgx.Conn, error) {
	deadline := time.Now().Add(wait)
	backoff := 20 * time.Millisecond
	for {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil || ctx.Err() != nil {
			return conn, err
		}
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != tooManyClients || !time.Now().Before(deadline) {
			return nil, err
		}
		t := time.NewTimer(min(backoff/2+rand.N(backoff), time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// connectError explains a failed connection: unreachable, or reached and
// refused (wrong password, no such database…).
func connectError(where, password string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == tooManyClients {
		return fmt.Errorf("the PostgreSQL at %s has no free connection for learn: %s (SQLSTATE %s), still after %s; other clients hold every connection it allows (its max_connections, or a CONNECTION LIMIT of the role or the database): end other learn runs or programs using it and try again, or raise max_connections",
			where, scrub(pgErr.Message, password), pgErr.Code, connWait)
	}
	if errors.As(err, &pgErr) {
		return fmt.Errorf("the PostgreSQL at %s refused learn: %s (SQLSTATE %s); check the user, password and database in DATABASE_URL / --database-url",
			where, scrub(pgErr.Message, password), pgErr.Code)
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
		where, scrub(oneLine(cause.Error()), password))
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

// address names the server without user or password: host:port, or the
// Unix socket path.
func address(cfg *pgx.ConnConfig) string {
	port := strconv.Itoa(int(cfg.Port))
	if strings.HasPrefix(cfg.Host, "/") {
		return cfg.Host + "/.s.PGSQL." + port
	}
	return net.JoinHostPort(cfg.Host, port)
}

// scrub removes a password from a message, in case a driver quoted it.
func scrub(msg, password string) string {
	if len(password) < 3 {
		return msg
	}
	return strings.ReplaceAll(msg, password, "xxxxx")
}
