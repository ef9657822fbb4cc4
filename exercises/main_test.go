package exercises

import (
	"os"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
)

// testDB is the package's PostgreSQL: the learner's module runs on it.
var testDB *pgtemp.Server

func TestMain(m *testing.M) { os.Exit(pgtemptest.Main(m, "exercises", &testDB)) }
