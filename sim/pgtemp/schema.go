package pgtemp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Schema is a schema learn_<16 hex digits> that NewSchema created: one per
// test, or one per run of the booking engine.
type Schema struct {
	// Name is the schema's name, e.g. "learn_3f9a0c1d2b4e5f60".
	Name string
	// ConnString is the server's ConnString with search_path=Name added, so
	// every pgx connection made from it creates and finds its tables in
	// this schema and nowhere else. In URL mode it may hold a password.
	ConnString string

	srv *Server
}

// NewSchema creates a fresh, empty schema learn_<random hex> and remembers it
// so that Close drops it if Drop was not called. It fails when the server is
// closed, when ctx ends, or when the database user may not create schemas
// (the message then says which privilege is missing).
func (s *Server) NewSchema(ctx context.Context) (*Schema, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("could not pick a schema name: %w", err)
	}
	name := "learn_" + hex.EncodeToString(b[:])

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("cannot create a schema: the PostgreSQL server was already closed")
	}
	err := s.exec(ctx, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "42501" { // insufficient_privilege
			return nil, fmt.Errorf("could not create schema %s (%s): %w; the database user needs the CREATE privilege on the database (GRANT CREATE ON DATABASE …)", name, s.describe, err)
		}
		return nil, fmt.Errorf("could not create schema %s (%s): %w", name, s.describe, err)
	}
	sc := &Schema{Name: name, ConnString: withSearchPath(s.connString, name), srv: s}
	if s.schemas == nil {
		s.schemas = make(map[string]*Schema)
	}
	s.schemas[name] = sc
	return sc, nil
}

// Drop removes the schema and everything in it (DROP SCHEMA … CASCADE).
// Dropping a schema twice, or after its server was closed (which dropped it
// already), does nothing and returns nil. Connections still open in the
// schema are not closed; close them first or Drop may wait for their locks.
func (sc *Schema) Drop(ctx context.Context) error {
	s := sc.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.schemas[sc.Name] != sc {
		return nil
	}
	if err := s.exec(ctx, dropSQL(sc.Name)); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("could not drop schema %s (%s): %w", sc.Name, s.describe, err)
	}
	delete(s.schemas, sc.Name)
	return nil
}

// dropSchemas drops the given schemas over one connection; Close uses it.
func (s *Server) dropSchemas(ctx context.Context, schemas map[string]*Schema) error {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return fmt.Errorf("could not drop learn's schemas (%s): %w", s.describe, err)
	}
	defer conn.Close(context.Background())
	var errs []error
	for name := range schemas {
		if _, err := conn.Exec(ctx, dropSQL(name)); err != nil {
			errs = append(errs, fmt.Errorf("could not drop schema %s (%s): %w; drop it by hand with DROP SCHEMA %s CASCADE", name, s.describe, err, name))
		}
	}
	return errors.Join(errs...)
}

// exec runs one statement on a connection of its own.
func (s *Server) exec(ctx context.Context, sql string) error {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
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
