package play

import (
	"os"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
)

// testDB is the package's PostgreSQL for the frame benchmark.
var testDB *pgtemp.Server

func TestMain(m *testing.M) { os.Exit(pgtemp.RunTests(m, "internal/ui/pages/play", &testDB)) }
