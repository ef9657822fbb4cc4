package pgtemp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/learn-idempotency/learn/internal/pgwait"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/pgsql"
)

// Schema is a schema learn_<16 hex digits> that NewSchema created: one per
// test, or one per run of the booking engine.
type Schema struct {
	name       string
	connString string
	srv        *Server
}

// Name is the schema's name, e.g. "learn_3f9a0c1d2b4e5f60".
func (sc *Schema) Name() string { return sc.name }

// ConnString is the server's ConnString with search_path set to the schema,
// so every pgx connection made from it creates and finds its tables in this
// schema and nowhere else. In URL mode it may hold a password.
func (sc *Schema) ConnString() string { return sc.connString }

// NewSchema creates a fresh, empty schema learn_<random hex> and remembers it
// so that Close drops it if Drop was not called. The schema's comment records
// this process as its owner ("learn owner: {…}", see schemaOwner), so that
// ReapSchemas can drop it should this process be killed before it could. It
// fails when the server is closed, when ctx ends, or when the database user
// may not create schemas (the message then says which privilege is missing).
// When it fails after sending the CREATE, the server may have carried it
// out: in a database that outlives learn the name is dropped then (or, if
// that fails too, by Close), so a failed NewSchema leaves no schema.
func (s *Server) NewSchema(ctx context.Context) (*Schema, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("could not pick a schema name: %w", err)
	}
	name := "learn_" + hex.EncodeToString(b[:])

	// The name is Close's to drop from before the CREATE is sent: the
	// server may carry the CREATE out and its answer never come back
	// (ctx ends, the connection drops), and then only a DROP … IF EXISTS
	// of the name is sure to leave nothing.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosedForSchemas
	}
	if s.pending == nil {
		s.pending = make(map[string]bool)
	}
	s.pending[name] = true
	s.mu.Unlock()
	// One simple-protocol query is one transaction: the schema never
	// exists without the owner record ReapSchemas goes by. No lock is held
	// over the round trip: a server that hangs must not hold up Close.
	ident := pgx.Identifier{name}.Sanitize()
	err := s.exec(ctx, "CREATE SCHEMA "+ident+"; COMMENT ON SCHEMA "+ident+" IS "+pgsql.QuoteLiteral(owner.ThisSchema().Comment()), "creating schema "+name)
	sc := &Schema{name: name, connString: withSearchPath(s.connString, name), srv: s}
	s.mu.Lock()
	closed := s.closed
	if err == nil && !closed {
		delete(s.pending, name)
		if s.schemas == nil {
			s.schemas = make(map[string]*Schema)
		}
		s.schemas[name] = sc
		s.mu.Unlock()
		return sc, nil
	}
	s.mu.Unlock()
	// The CREATE failed, perhaps after the server carried it out, or Close
	// ran meanwhile and may have dropped the name before the CREATE came:
	// in a database that outlives learn, drop the name now (a cluster of
	// learn's own takes its schemas with it). Should that fail too, the
	// name stays for Close (or, once this process is gone, ReapSchemas).
	dropped := s.inst.Disposable
	if !dropped {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		dropped = s.exec(dctx, pgsql.DropSchemaSQL(name), "dropping schema "+name) == nil
		cancel()
	}
	if dropped {
		s.mu.Lock()
		delete(s.pending, name)
		s.mu.Unlock()
	}
	switch {
	case closed || s.isClosed():
		return nil, errClosedForSchemas
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "42501" { // insufficient_privilege
		return nil, fmt.Errorf("could not create schema %s (%s): %w; the database user needs the CREATE privilege on the database (GRANT CREATE ON DATABASE …)", name, s.describe, err)
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == pgsql.TooManyClients {
		return nil, fmt.Errorf("could not create schema %s: %s has no free connection for learn, still after %s (%w); end other learn runs or programs using it and try again, or raise max_connections", name, s.describe, pgsql.ConnWait, err)
	}
	return nil, fmt.Errorf("could not create schema %s (%s): %w", name, s.describe, err)
}

// errClosedForSchemas is NewSchema's error once Close has begun.
var errClosedForSchemas = errors.New("cannot create a schema: the PostgreSQL server was already closed")

// isClosed reports whether Close has begun.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Drop removes the schema and everything in it (DROP SCHEMA … CASCADE).
// Dropping a schema twice, or after its server was closed (which dropped it
// already), does nothing and returns nil; so does a Drop that fails
// because Close began while it waited (Close removes what is left). No
// lock is held over the round trip, so a server that hangs holds up
// neither other schemas nor Close. Sessions that still hold a lock in the
// schema (a program that was killed while its statement runs on, a
// transaction left open) are ended first (pg_terminate_backend), so that
// the DROP never waits on them: close your own connections first.
func (sc *Schema) Drop(ctx context.Context) error {
	s := sc.srv
	s.mu.Lock()
	mine := s.schemas[sc.name] == sc
	s.mu.Unlock()
	if !mine {
		return nil
	}
	if err := s.dropSchema(ctx, sc.name); err != nil {
		if s.isClosed() {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("could not drop schema %s (%s): %w; drop it by hand with DROP SCHEMA %s CASCADE", sc.name, s.describe, err, sc.name)
	}
	s.mu.Lock()
	if s.schemas[sc.name] == sc {
		delete(s.schemas, sc.name)
	}
	s.mu.Unlock()
	return nil
}

// Schemas lists, sorted, the schemas NewSchema made that are not dropped
// yet: what this process holds in the server right now.
func (s *Server) Schemas() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.schemas))
	for name := range s.schemas {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ConnectionLimit is how many connections learn may hold on the server at
// once: max_connections less the slots kept for superusers and, from
// PostgreSQL 16, for roles with pg_use_reserved_connections. Other clients
// of a database named by URL take their share of it too.
func (s *Server) ConnectionLimit(ctx context.Context) (int, error) {
	conn, err := pgsql.ConnectWaiting(ctx, s.cfg, pgsql.ConnWait)
	if err != nil {
		return 0, fmt.Errorf("could not read max_connections (%s): %w", s.describe, err)
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int
		- current_setting('superuser_reserved_connections')::int
		- coalesce(current_setting('reserved_connections', true)::int, 0)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("could not read max_connections (%s): %w", s.describe, err)
	}
	return n, nil
}

// dropSchemas drops the schemas named (IF EXISTS) over one connection;
// Close uses it.
func (s *Server) dropSchemas(ctx context.Context, names []string) error {
	conn, err := pgsql.ConnectWaiting(ctx, s.cfg, pgsql.ConnWait)
	if err != nil {
		return fmt.Errorf("could not drop learn's schemas (%s): %w", s.describe, err)
	}
	defer conn.Close(context.Background())
	var errs []error
	for _, name := range names {
		if _, err := conn.Exec(ctx, pgsql.DropSchemaSQL(name)); err != nil {
			errs = append(errs, fmt.Errorf("could not drop schema %s (%s): %w; drop it by hand with DROP SCHEMA %s CASCADE", name, s.describe, err, name))
		}
	}
	return errors.Join(errs...)
}

// exec runs one statement on a connection of its own, waiting up to
// pgsql.ConnWait for one while the server answers "too many clients". While it
// waits past pgwait.After, ctx's teller (pgwait.WithTrace) is told what
// for; what names the statement for it ("creating schema learn_…").
// lockersSQL ends the other sessions that hold a lock on the schema $1
// or on anything in it.
const lockersSQL = `SELECT pg_terminate_backend(l.pid) FROM pg_locks l
  JOIN pg_namespace n ON n.nspname = $1
  LEFT JOIN pg_class c ON l.locktype = 'relation' AND c.oid = l.relation
  WHERE l.pid <> pg_backend_pid()
    AND (c.relnamespace = n.oid OR l.classid = 'pg_namespace'::regclass AND l.objid = n.oid)`

// dropSchema drops the schema name, ending first the sessions that hold
// a lock in it; one that takes a lock again meanwhile is ended on the
// next round (a DROP waits at most 2 s on a lock, and is tried up to 15
// times).
func (s *Server) dropSchema(ctx context.Context, name string) error {
	conn, err := pgsql.ConnectWaiting(ctx, s.cfg, pgsql.ConnWait)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	stop := pgwait.Watch(ctx, conn.Config(), conn.PgConn().PID(), "dropping schema "+name)
	defer stop()
	for try := 1; ; try++ {
		if _, err := conn.Exec(ctx, lockersSQL, name); err != nil {
			return err
		}
		_, err = conn.Exec(ctx, "SET lock_timeout = '2s'; "+pgsql.DropSchemaSQL(name))
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "55P03" || try == 15 { // lock_not_available
			_, _ = conn.Exec(ctx, "RESET lock_timeout")
			return err
		}
	}
}

func (s *Server) exec(ctx context.Context, sql, what string) error {
	conn, err := pgsql.ConnectWaiting(ctx, s.cfg, pgsql.ConnWait)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	stop := pgwait.Watch(ctx, conn.Config(), conn.PgConn().PID(), what)
	defer stop()
	_, err = conn.Exec(ctx, sql)
	return err
}

// withSearchPath adds search_path=schema to a connection string in either of
// the forms pgx accepts. pgx sends parameters it does not know itself, like
// search_path, to the server as run-time parameters at connect time.
func withSearchPath(connString, schema string) string {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err == nil && u.Query().Has("search_path") {
			// pgx reads the first search_path, so replace rather than append.
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return u.String()
		}
		// Append without re-encoding, which keeps forms such as
		// multi-host URLs exactly as the user wrote them.
		base, frag, _ := strings.Cut(connString, "#")
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		if strings.HasSuffix(base, "?") || strings.HasSuffix(base, "&") {
			sep = ""
		}
		out := base + sep + "search_path=" + url.QueryEscape(schema)
		if frag != "" {
			out += "#" + frag
		}
		return out
	}
	return strings.TrimRight(connString, " ") + " search_path=" + pgsql.KVQuote(schema)
}
