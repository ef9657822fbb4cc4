package quiz

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/sim/pgtemp"
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	srv, err := pgtemp.StartForTests(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "quiz tests need PostgreSQL:", err)
		os.Exit(1)
	}
	testDB = srv
	code := m.Run()
	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close test PostgreSQL:", err)
	}
	os.Exit(code)
}
