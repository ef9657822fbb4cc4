//go:build linux

package pgtemp

import (
	"context"
	"strings"
	"testing"
)

func schemaExists(t testing.TB, s *Server, name string) bool {
	t.Helper()
	conn := connect(t, s.ConnString())
	return queryString(t, conn, "SELECT count(*)::text FROM pg_namespace WHERE nspname = $1", name) == "1"
}

func newSchemaT(t testing.TB, s *Server) *Schema {
	t.Helper()
	sc, err := s.NewSchema(context.Background())
	if err != nil {
		t.Fatalf("NewSchema: %v", err)
	}
	t.Cleanup(func() { sc.Drop(context.Background()) })
	return sc
}

func TestSchemasAreIsolated(t *testing.T) {
	s := needShared(t)
	a, b := newSchemaT(t, s), newSchemaT(t, s)
	if a.Name == b.Name || !strings.HasPrefix(a.Name, "learn_") || len(a.Name) != len("learn_")+16 {
		t.Fatalf("schema names %q and %q", a.Name, b.Name)
	}
	ctx := context.Background()
	ca, cb := connect(t, a.ConnString), connect(t, b.ConnString)
	if got := queryString(t, ca, "SELECT current_schema()::text"); got != a.Name {
		t.Errorf("current_schema through a.ConnString = %s, want %s", got, a.Name)
	}
	if _, err := ca.Exec(ctx, "CREATE TABLE bookings (id int PRIMARY KEY); INSERT INTO bookings VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, ca, "SELECT to_regclass('bookings')::text"); got != "bookings" {
		t.Errorf("table not visible in its own schema: %s", got)
	}
	if got := queryString(t, cb, "SELECT coalesce(to_regclass('bookings')::text, 'none')"); got != "none" {
		t.Errorf("table made in %s is visible in %s as %s", a.Name, b.Name, got)
	}
	if got := queryString(t, cb, "SELECT count(*)::text FROM pg_tables WHERE tablename = 'bookings' AND schemaname = $1", a.Name); got != "1" {
		t.Errorf("table did not land in schema %s", a.Name)
	}
	ca.Close(ctx)

	if err := a.Drop(ctx); err != nil {
		t.Fatalf("Drop: %v", err)
	}
	if schemaExists(t, s, a.Name) {
		t.Errorf("schema %s exists after Drop", a.Name)
	}
	if err := a.Drop(ctx); err != nil {
		t.Errorf("second Drop: %v", err)
	}
	if !schemaExists(t, s, b.Name) {
		t.Errorf("dropping %s removed %s too", a.Name, b.Name)
	}
}

// TestCloseDropsSchemas uses a URL-mode server on the shared one, since a
// local cluster's schemas go with the cluster.
func TestCloseDropsSchemas(t *testing.T) {
	base := needShared(t)
	s := startT(t, Options{Mode: URL, DatabaseURL: base.ConnString()})
	ctx := context.Background()
	kept, err := s.NewSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dropped, err := s.NewSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := dropped.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if !schemaExists(t, base, kept.Name) {
		t.Fatalf("schema %s missing before Close", kept.Name)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if schemaExists(t, base, kept.Name) {
		t.Errorf("Close left schema %s", kept.Name)
	}
	if err := kept.Drop(ctx); err != nil {
		t.Errorf("Drop after Close: %v", err)
	}
	if _, err := s.NewSchema(ctx); err == nil {
		t.Errorf("NewSchema after Close succeeded")
	}
}

func TestSearchPathInURLForm(t *testing.T) {
	needLocal(t)
	s := needShared(t)
	if s.local == nil {
		t.Skip("the shared server is not local")
	}
	u := "postgres:///postgres?host=" + s.local.dir + "&user=learn&sslmode=disable"
	us := startT(t, Options{Mode: URL, DatabaseURL: u})
	sc := newSchemaT(t, us)
	conn := connect(t, sc.ConnString)
	if got := queryString(t, conn, "SELECT current_schema()::text"); got != sc.Name {
		t.Errorf("current_schema through %s = %s, want %s", sc.ConnString, got, sc.Name)
	}
}

func TestWithSearchPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"host=/tmp/x port=5432 user=learn", "host=/tmp/x port=5432 user=learn search_path=learn_1"},
		{"postgres://u:p@h:5432/db", "postgres://u:p@h:5432/db?search_path=learn_1"},
		{"postgres://u@h/db?sslmode=disable", "postgres://u@h/db?sslmode=disable&search_path=learn_1"},
		{"postgresql://u@h1:5432,h2:5433/db", "postgresql://u@h1:5432,h2:5433/db?search_path=learn_1"},
		{"postgres://u@h/db?search_path=public", "postgres://u@h/db?search_path=learn_1"},
	}
	for _, tt := range tests {
		if got := withSearchPath(tt.in, "learn_1"); got != tt.want {
			t.Errorf("withSearchPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
