package main

import (
	"path/filepath"

	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
	"github.com/learn-idempotency/learn/sim/api/contracttest"
)

// testDB is the package's PostgreSQL for the UI tests: a throwaway local
// cluster, or the server LEARN_TEST_DATABASE names.
var testDB *pgtemp.Server

func TestMain(m *testing.M) {
	// The scripts of testdata/script run learn as a program of its own
	// (testscript), which is this test binary under the name learn.
	testscript.Main(packageTests{m}, map[string]func(){"learn": learnForScripts})
}

// packageTests runs the package's tests as TestMain did before the
// scripts: one tmux server and one PostgreSQL for the whole run.
type packageTests struct{ m *testing.M }

func (p packageTests) Run() int {
	// One tmux server for the whole run: a server that exits with its last
	// session races the next test's new session. The session ends by itself
	// once this process is gone, so a run killed by its timeout (which skips
	// the kill-session below) leaves no session behind.
	keep := "learn-test-keepalive-" + strconv.Itoa(os.Getpid())
	if _, err := exec.LookPath("tmux"); err == nil {
		watch := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 1; done", os.Getpid())
		_ = exec.Command("tmux", "new-session", "-d", "-s", keep, watch).Run()
	}
	// Every answer of learn serve a test gets through Go's default client
	// is checked against the published OpenAPI document.
	check, err := contracttest.InstallDefault()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := pgtemptest.Main(p.m, "cmd/learn", &testDB)
	_ = exec.Command("tmux", "kill-session", "-t", exactTarget(keep)).Run()
	if report, ok := check.Report(); !ok {
		fmt.Fprintln(os.Stderr, report)
		code = max(code, 1)
	}
	return code
}

// learnForScripts is learn as the scripts run it: the command line as main
// runs it once the supervisor has handed over (run), its exit status also
// written to $WORK/.status for the scripts' status command.
func learnForScripts() {
	ctx, stop := rootContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if work := os.Getenv("WORK"); work != "" {
		_ = os.WriteFile(filepath.Join(work, ".status"), []byte(strconv.Itoa(code)), 0o600)
	}
	os.Exit(code)
}
