package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/learn-idempotency/learn/internal/exit"
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
// scripts: one tmux server and one PostgreSQL for the whole run, and one
// build of the learn binary (buildLearn).
//
// The end-to-end cases that drive the built binary run in parallel
// (t.Parallel): each has its binary under a path of its own (so what it
// finds by the program's name, pkill -f or /proc, is its own), its own
// tmux session or server, and its own PostgreSQL, or schemas of its own
// in testDB. The rest run first, one at a time, as Go runs the tests that
// are not parallel before any that are: those that set the environment
// (t.Setenv), learn doctor (which reaps what killed runs left), and those
// that count every schema in testDB that this process did not make (a
// parallel case's learn makes some).
type packageTests struct{ m *testing.M }

func (p packageTests) Run() int {
	// The end-to-end cases wait on other processes (learn, its PostgreSQL,
	// tmux, ssh) far more than they compute: unless -test.parallel says
	// otherwise, three times as many run at once as there are CPUs.
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(3*runtime.GOMAXPROCS(0)))
	}
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
	removeBuiltLearn()
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
	ctx, stop := exit.RootContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if work := os.Getenv("WORK"); work != "" {
		_ = os.WriteFile(filepath.Join(work, ".status"), []byte(strconv.Itoa(code)), 0o600)
	}
	os.Exit(code)
}
