package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/sim/pgtemp"
)

// testDB is the package's PostgreSQL for the UI tests: a throwaway local
// cluster, or the server LEARN_TEST_DATABASE names.
var testDB *pgtemp.Server

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	srv, err := pgtemp.StartForTests(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmd/learn tests need PostgreSQL:", err)
		os.Exit(1)
	}
	testDB = srv
	code := m.Run()
	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close test PostgreSQL:", err)
	}
	os.Exit(code)
}
