package check

import (
	"os"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
)

// testDB is the package's PostgreSQL: the wire is tried against learn's
// real API on it.
var testDB *pgtemp.Server

func TestMain(m *testing.M) { os.Exit(pgtemptest.Main(m, "sim/check", &testDB)) }
