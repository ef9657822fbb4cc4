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
	err := s.exec(ctx, "CREATE SCHEMA "+ident+"; COMMENT ON SCHEMA "+ident+" IS "+quoteLiteral(thisSchemaOwner().comment()), "creating schema "+name)
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
	dropped := s.local != nil || s.docker != nil
	if !dropped {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		dropped = s.exec(dctx, dropSQL(name), "dropping schema "+name) == nil
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
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == tooManyClients {
		return nil, fmt.Errorf("could not create schema %s: %s has no free connection for learn, still after %s (%w); end other learn runs or programs using it and try again, or raise max_connections", name, s.describe, connWait, err)
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
// neither other schemas nor Close. Connections still open in the schema
// are not closed; close them first or Drop may wait for their locks.
func (sc *Schema) Drop(ctx context.Context) error {
	s := sc.srv
	s.mu.Lock()
	mine := s.schemas[sc.name] == sc
	s.mu.Unlock()
	if !mine {
		return nil
	}
	if err := s.exec(ctx, dropSQL(sc.name), "dropping schema "+sc.name); err != nil {
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
	conn, err := connectWaiting(ctx, s.cfg, connWait)
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
	conn, err := connectWaiting(ctx, s.cfg, connWait)
	if err != nil {
		return fmt.Errorf("could not drop learn's schemas (%s): %w", s.describe, err)
	}
	defer conn.Close(context.Background())
	var errs []error
	for _, name := range names {
		if _, err := conn.Exec(ctx, dropSQL(name)); err != nil {
			errs = append(errs, fmt.Errorf("could not drop schema %s (%s): %w; drop it by hand with DROP SCHEMA %s CASCADE", name, s.describe, err, name))
		}
	}
	return errors.Join(errs...)
}

// exec runs one statement on a connection of its own, waiting up to
// connWait for one while the server answers "too many clients". While it
// waits past pgwait.After, ctx's teller (pgwait.WithTrace) is told what
// for; what names the statement for it ("creating schema learn_…").
func (s *Server) exec(ctx context.Context, sql, what string) error {
	conn, err := connectWaiting(ctx, s.cfg, connWait)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	stop := pgwait.Watch(ctx, conn.Config(), conn.PgConn().PID(), what)
	defer stop()
	_, err = conn.Exec(ctx, sql)
	return err
}

func dropSQL(name string) string {
	return "DROP SCHEMA IF EXISTS " + pgx.Identifier{name}.Sanitize() + " CASCADE"
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
	return strings.TrimRight(connString, " ") + " search_path=" + kvQuote(schema)
}

// kvQuote quotes a value for a keyword/value connection string when it needs it.
func kvQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " '\\\t\n") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// isSchemaName reports whether name is one NewSchema gives: "learn_" and 16
// lowercase hex digits. Other learn_* schemas are never looked at.
func isSchemaName(name string) bool {
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

// quoteLiteral quotes s as an SQL string literal (COMMENT takes no
// parameters), whatever standard_conforming_strings is.
func quoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		q = "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// reapLockTimeout bounds how long ReapSchemas waits for a lock on a schema
// it drops (a session of the dead learn the server has not ended yet); the
// schema is then left for the next run.
const reapLockTimeout = 5 * time.Second

// SchemaReport is what ReapSchemas found in a database: every schema
// learn_<16 hex digits> in it, sorted by name within each list.
type SchemaReport struct {
	// Dropped lists the schemas of killed learn runs that were dropped.
	Dropped []string
	// InUse lists the schemas whose learn process still runs on this
	// machine (this one included); they were not touched.
	InUse []string
	// Left lists the schemas left alone because learn cannot tell from here
	// whether the learn that made them still runs (another host, before a
	// restart, another pid namespace, no owner record), or because the
	// database user may not drop them. A person decides: LeftSchema.Drop
	// is the command to run once no learn uses one.
	Left []LeftSchema
}

// LeftSchema is one schema ReapSchemas left alone, and why.
type LeftSchema struct {
	Name string
	// Why says why learn did not drop it, e.g. "made by learn pid 4242 on
	// host build-box-7 at 2026-01-02T03:04:05Z, which learn cannot check
	// from here".
	Why string
}

// Drop is the statement that drops the schema and everything in it. The
// name is learn_<16 hex digits> (isSchemaName), so it needs no quotes.
func (l LeftSchema) Drop() string {
	return "DROP SCHEMA " + l.Name + " CASCADE"
}

// String is for people: the schema and why it is left, then, on a line of
// its own, the statement to run once no learn uses it.
func (l LeftSchema) String() string {
	return fmt.Sprintf("left %s alone: %s\nonce no learn uses it, drop it: %s", l.Name, l.Why, l.Drop())
}

// ReapSchemas drops the schemas that learn processes killed outright (SIGKILL,
// the OOM killer, a crash) left in the database connString names, and
// reports every schema of learn's it saw. It looks only at schemas
// learn_<16 hex digits>, and drops one (DROP SCHEMA … CASCADE) only when its
// comment is the owner record NewSchema writes ("learn owner: {…}"), that
// owner ran on this machine (same host name, boot id and pid namespace) and
// its process is gone: the pid does not exist, or now belongs to a process
// that started at another time. It never drops a schema without such a
// comment, one made on another host or before a restart, one whose learn is
// alive (this one, or another terminal's), one the database user may not
// drop, or anything else in the database; the report lists those in InUse
// or Left, with the reason and the statement a person may run (another
// host's learn may still be using its schema, so learn never guesses).
// logf, when not nil, gets one line per schema dropped, naming the server
// by host and port, never the password. The error says why the database
// could not be looked at, or joins the schemas that could not be dropped
// (the others still are); it is ctx's error when ctx ends. Start runs it in
// URL mode before anything else; `learn doctor` and the supervising parent
// of a learn that crashed run it too.
func ReapSchemas(ctx context.Context, connString string, logf func(format string, args ...any)) (SchemaReport, error) {
	cfg, err := parseURL(connString)
	if err != nil {
		return SchemaReport{}, err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > urlConnectTimeout {
		cfg.ConnectTimeout = urlConnectTimeout
	}
	conn, err := connectWaiting(ctx, cfg, connWait)
	if err != nil {
		if ctx.Err() != nil {
			return SchemaReport{}, ctx.Err()
		}
		return SchemaReport{}, connectError(address(cfg), cfg.Password, err)
	}
	defer conn.Close(context.Background())
	return reapSchemas(ctx, conn, logf)
}

// reapSchemas is ReapSchemas on an open connection, which it leaves with a
// lock_timeout set.
func reapSchemas(ctx context.Context, conn *pgx.Conn, logf func(string, ...any)) (SchemaReport, error) {
	var rep SchemaReport
	cfg := conn.Config()
	where := fmt.Sprintf("the PostgreSQL at %s, database %s", address(cfg), cfg.Database)
	fail := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("could not look for schemas of killed learn runs in %s: %s", where, scrub(err.Error(), cfg.Password))
	}
	stop := pgwait.Watch(ctx, cfg, conn.PgConn().PID(), "looking for the schemas of killed learn runs in "+where)
	defer stop()
	rows, err := conn.Query(ctx, `
		SELECT n.nspname, pg_catalog.obj_description(n.oid, 'pg_namespace'),
		       pg_catalog.pg_has_role(n.nspowner, 'USAGE'),
		       pg_catalog.pg_get_userbyid(n.nspowner)::text, current_user::text
		  FROM pg_catalog.pg_namespace n
		 WHERE n.nspname LIKE $1
		 ORDER BY n.nspname`, `learn\_%`)
	if err != nil {
		return rep, fail(err)
	}
	type orphan struct{ name, why string }
	var orphans []orphan
	var name, owner, user string
	var comment *string
	var mayDrop bool
	_, err = pgx.ForEachRow(rows, []any{&name, &comment, &mayDrop, &owner, &user}, func() error {
		if !isSchemaName(name) {
			return nil
		}
		o, ok := schemaOwner{}, false
		if comment != nil {
			o, ok = parseSchemaOwner(*comment)
		}
		if !ok {
			rep.Left = append(rep.Left, LeftSchema{name, "named as learn names its schemas, but its comment holds no owner record of learn's (an older learn made it, or not learn), so learn cannot tell whose it is"})
			return nil
		}
		gone, why, leave := o.gone()
		switch {
		case leave != "":
			rep.Left = append(rep.Left, LeftSchema{name, fmt.Sprintf("%s; learn cannot tell from here whether that learn still runs (%s)", o, leave)})
		case !gone:
			rep.InUse = append(rep.InUse, name)
		case !mayDrop:
			rep.Left = append(rep.Left, LeftSchema{name, fmt.Sprintf("%s; %s, but the schema belongs to the database role %s, which %s may not drop", o, why, owner, user)})
		default:
			orphans = append(orphans, orphan{name, why})
		}
		return nil
	})
	if err != nil {
		return rep, fail(err)
	}
	if len(orphans) == 0 {
		return rep, nil
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("SET lock_timeout = %d", reapLockTimeout.Milliseconds())); err != nil {
		return rep, fail(err)
	}
	var errs []error
	for _, o := range orphans {
		if _, err := conn.Exec(ctx, dropSQL(o.name)); err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			var exists bool
			if conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = $1)", o.name).Scan(&exists) == nil && !exists {
				continue // another learn dropped it meanwhile
			}
			errs = append(errs, fmt.Errorf("could not drop the schema %s of a killed learn (%s) in %s: %s; drop it by hand with DROP SCHEMA %s CASCADE",
				o.name, o.why, where, scrub(err.Error(), cfg.Password), o.name))
			continue
		}
		rep.Dropped = append(rep.Dropped, o.name)
		if logf != nil {
			logf("removed an orphaned schema %s from %s: %s", o.name, where, o.why)
		}
	}
	return rep, errors.Join(errs...)
}
