package live

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
)

// testDB is this package's PostgreSQL: a throwaway local cluster, or the
// server LEARN_TEST_DATABASE points at. Each run takes a fresh schema.
var testDB *pgtemp.Server

func TestMain(m *testing.M) { os.Exit(pgtemptest.Main(m, "internal/live", &testDB)) }

// newRuns is an owner of runs on testDB, closed when the test ends.
func newRuns(t *testing.T) *Runs {
	t.Helper()
	rs := NewRuns(t.Context(), Existing(testDB))
	t.Cleanup(rs.Close)
	return rs
}

// schemaExists reports whether PostgreSQL still has the schema name.
func schemaExists(t *testing.T, name string) bool {
	t.Helper()
	d, err := Existing(testDB).Wait(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := d.NewSchema(t.Context()) // a connection string to ask with
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sc.Drop(context.WithoutCancel(t.Context())) }()
	n, err := countRows(t.Context(), sc.ConnString(), `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, name)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// ownSchemas is the schemas this process holds in testDB now, other than
// those in keep.
func ownSchemas(keep ...string) []string {
	return slices.DeleteFunc(testDB.Schemas(), func(s string) bool { return slices.Contains(keep, s) })
}
