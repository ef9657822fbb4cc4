package play

import (
	"os"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
)

// testDB is the package's PostgreSQL for the frame benchmark.
var testDB *pgtemp.Server

func TestMain(m *testing.M) { os.Exit(pgtemptest.Main(m, "internal/ui/pages/play", &testDB)) }
