// Package pgsql holds the small pieces of talking to a PostgreSQL that
// pgtemp's ways and its Server share: connecting while the server has no
// free connection ([ConnectWaiting]), the readiness probe ([Ping]),
// keyword/value quoting ([KVQuote]), naming a server without its password
// ([Address], [Scrub]), and the names and statements of learn's schemas
// ([IsSchemaName], [DropSchemaSQL], [QuoteLiteral]).
package pgsql

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TooManyClients is the SQLSTATE of a server (or a role, or a database)
// that has no connection left: "sorry, too many clients already".
const TooManyClients = "53300"

// ConnWait is how long learn waits for a connection while the server
// answers "too many clients": other learn runs on the same server free
// theirs within seconds.
var ConnWait = 15 * time.Second

// ConnectWaiting connects, and while the server answers "too many clients"
// tries again with backoff for up to wait; then it returns the last error.
// Any other error, or ctx ending, is returned at once.
func ConnectWaiting(ctx context.Context, cfg *pgx.ConnConfig, wait time.Duration) (*pgx.Conn, error) {
	deadline := time.Now().Add(wait)
	backoff := 20 * time.Millisecond
	for {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil || ctx.Err() != nil {
			return conn, err
		}
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != TooManyClients || !time.Now().Before(deadline) {
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

// Ping connects and runs SELECT 1.
func Ping(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// KVQuote quotes a value for a keyword/value connection string when it needs it.
func KVQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " '\\\t\n") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// Address names the server without user or password: host:port, or the
// Unix socket path.
func Address(cfg *pgx.ConnConfig) string {
	port := strconv.Itoa(int(cfg.Port))
	if strings.HasPrefix(cfg.Host, "/") {
		return cfg.Host + "/.s.PGSQL." + port
	}
	return net.JoinHostPort(cfg.Host, port)
}

// Scrub removes a password from a message, in case a driver quoted it.
func Scrub(msg, password string) string {
	if len(password) < 3 {
		return msg
	}
	return strings.ReplaceAll(msg, password, "xxxxx")
}

// DropSchemaSQL is the statement that drops a schema of learn's, if it
// exists, with everything in it.
func DropSchemaSQL(name string) string {
	return "DROP SCHEMA IF EXISTS " + pgx.Identifier{name}.Sanitize() + " CASCADE"
}

// IsSchemaName reports whether name is one pgtemp's NewSchema gives:
// "learn_" and 16 lowercase hex digits. Other learn_* schemas are never
// looked at.
func IsSchemaName(name string) bool {
	h, ok := strings.CutPrefix(name, "learn_")
	if !ok || len(h) != 16 {
		return false
	}
	for _, r := range h {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// QuoteLiteral quotes s as an SQL string literal (COMMENT takes no
// parameters), whatever standard_conforming_strings is.
func QuoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		q = "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}
