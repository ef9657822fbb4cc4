package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
)

// testDB is the package's PostgreSQL for the UI tests: a throwaway local
// cluster, or the server LEARN_TEST_DATABASE names.
var testDB *pgtemp.Server

func TestMain(m *testing.M) {
	// One tmux server for the whole run: a server that exits with its last
	// session races the next test's new session. The session ends by itself
	// once this process is gone, so a run killed by its timeout (which skips
	// the kill-session below) leaves no session behind.
	keep := "learn-test-keepalive-" + strconv.Itoa(os.Getpid())
	if _, err := exec.LookPath("tmux"); err == nil {
		watch := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 1; done", os.Getpid())
		_ = exec.Command("tmux", "new-session", "-d", "-s", keep, watch).Run()
	}
	code := pgtemptest.Main(m, "cmd/learn", &testDB)
	_ = exec.Command("tmux", "kill-session", "-t", exactTarget(keep)).Run()
	os.Exit(code)
}
