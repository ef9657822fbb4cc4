package quiz

import (
	"os"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
)

// testDB is this package's PostgreSQL: a throwaway local cluster, or the
// server LEARN_TEST_DATABASE points at. Each live run takes a fresh schema.
var testDB *pgtemp.Server

func TestMain(m *testing.M) {
	// A copy of this test binary started by TestStoreTwoProcesses saves
	// progress and exits; it needs no PostgreSQL.
	if os.Getenv(helperEnv) != "" {
		os.Exit(storeHelper())
	}
	os.Exit(pgtemp.RunTests(m, "quiz", &testDB))
}

// testDatabase hands out schemas of testDB.
func testDatabase() sim.Database { return sim.DatabaseOf(testDB.NewSchema) }
