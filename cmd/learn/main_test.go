package main

import (
	"os"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
)

// testDB is the package's PostgreSQL for the UI tests: a throwaway local
// cluster, or the server LEARN_TEST_DATABASE names.
var testDB *pgtemp.Server

func TestMain(m *testing.M) { os.Exit(pgtemp.RunTests(m, "cmd/learn", &testDB)) }

// testDatabase hands out schemas of testDB.
func testDatabase() sim.Database { return sim.DatabaseOf(testDB.NewSchema) }
