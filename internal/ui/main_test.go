package ui

import (
	"os"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
)

// testDB is the package's PostgreSQL for the UI tests: a throwaway local
// cluster, or the server LEARN_TEST_DATABASE points at.
var testDB *pgtemp.Server

func TestMain(m *testing.M) { os.Exit(pgtemptest.Main(m, "internal/ui", &testDB)) }
