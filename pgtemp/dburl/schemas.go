package dburl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/learn-idempotency/learn/internal/pgwait"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/pgsql"
)

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
// name is learn_<16 hex digits> (pgsql.IsSchemaName), so it needs no quotes.
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
	cfg, err := ParseURL(connString)
	if err != nil {
		return SchemaReport{}, err
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > urlConnectTimeout {
		cfg.ConnectTimeout = urlConnectTimeout
	}
	conn, err := pgsql.ConnectWaiting(ctx, cfg, pgsql.ConnWait)
	if err != nil {
		if ctx.Err() != nil {
			return SchemaReport{}, ctx.Err()
		}
		return SchemaReport{}, ConnectError(pgsql.Address(cfg), cfg.Password, err)
	}
	defer conn.Close(context.Background())
	return reapSchemas(ctx, conn, logf)
}

// reapSchemas is ReapSchemas on an open connection, which it leaves with a
// lock_timeout set.
func reapSchemas(ctx context.Context, conn *pgx.Conn, logf func(string, ...any)) (SchemaReport, error) {
	var rep SchemaReport
	cfg := conn.Config()
	where := fmt.Sprintf("the PostgreSQL at %s, database %s", pgsql.Address(cfg), cfg.Database)
	fail := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("could not look for schemas of killed learn runs in %s: %s", where, pgsql.Scrub(err.Error(), cfg.Password))
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
	var name, nspOwner, user string
	var comment *string
	var mayDrop bool
	_, err = pgx.ForEachRow(rows, []any{&name, &comment, &mayDrop, &nspOwner, &user}, func() error {
		if !pgsql.IsSchemaName(name) {
			return nil
		}
		o, ok := owner.Schema{}, false
		if comment != nil {
			o, ok = owner.ParseSchema(*comment)
		}
		if !ok {
			rep.Left = append(rep.Left, LeftSchema{name, "named as learn names its schemas, but its comment holds no owner record of learn's (an older learn made it, or not learn), so learn cannot tell whose it is"})
			return nil
		}
		gone, why, leave := o.Gone()
		switch {
		case leave != "":
			rep.Left = append(rep.Left, LeftSchema{name, fmt.Sprintf("%s; learn cannot tell from here whether that learn still runs (%s)", o, leave)})
		case !gone:
			rep.InUse = append(rep.InUse, name)
		case !mayDrop:
			rep.Left = append(rep.Left, LeftSchema{name, fmt.Sprintf("%s; %s, but the schema belongs to the database role %s, which %s may not drop", o, why, nspOwner, user)})
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
		if _, err := conn.Exec(ctx, pgsql.DropSchemaSQL(o.name)); err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			var exists bool
			if conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = $1)", o.name).Scan(&exists) == nil && !exists {
				continue // another learn dropped it meanwhile
			}
			errs = append(errs, fmt.Errorf("could not drop the schema %s of a killed learn (%s) in %s: %s; drop it by hand with DROP SCHEMA %s CASCADE",
				o.name, o.why, where, pgsql.Scrub(err.Error(), cfg.Password), o.name))
			continue
		}
		rep.Dropped = append(rep.Dropped, o.name)
		if logf != nil {
			logf("removed an orphaned schema %s from %s: %s", o.name, where, o.why)
		}
	}
	return rep, errors.Join(errs...)
}
