package exercises

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A line of standard output far longer than maxLine is read in a bounded
// buffer: what fits is kept, the rest dropped, and the next line is read
// whole.
func TestALongLineIsDropped(t *testing.T) {
	long := strings.Repeat("x", 5*maxLine)
	rd := bufio.NewReaderSize(strings.NewReader(long+"\nlearn-sync 7\n"), maxLine)
	first, err := readLine(rd)
	if err != nil || len(first) != maxLine {
		t.Fatalf("first line: %d bytes, %v; want %d", len(first), err, maxLine)
	}
	if next, err := readLine(rd); err != nil || next != "learn-sync 7\n" {
		t.Errorf("next line %q, %v", next, err)
	}
}

// The learner's program is built outside any go.work above it.
func TestAWorkspaceAboveTheModuleIsLeftOut(t *testing.T) {
	dir := moduleAt(t, "")
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "go.work"), []byte("go 1.26\n\nuse ./nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
}

// What schema.sql gets wrong is said at its line, counted in characters
// as PostgreSQL counts; one that does not finish is stopped and said.
func TestASchemaThatDoesNotRunIsSaid(t *testing.T) {
	dir := moduleAt(t, "")
	write := func(sql string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "schema.sql"), []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("-- les tables, réécrites «à la main» ééééé\n\n\nCREATE TABLEX events (id int);\n")
	rep := checkModule2(t, dir)
	if !strings.Contains(rep.Stopped, "schema.sql:4: syntax error at or near \"TABLEX\"") {
		t.Errorf("stopped: %q", rep.Stopped)
	}
	old := tablesWithin
	tablesWithin = 200 * time.Millisecond
	t.Cleanup(func() { tablesWithin = old })
	write("SELECT pg_sleep(60);\n")
	if rep := checkModule2(t, dir); !strings.Contains(rep.Stopped, "did not finish within 200ms") {
		t.Errorf("stopped: %q", rep.Stopped)
	}
}

// checkModule2 checks dir and returns the report, stopped or not.
func checkModule2(t *testing.T, dir string) *Report {
	t.Helper()
	rep, err := Check(t.Context(), dir, testDB, Options{Exercises: []string{"one-transaction"}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A program that exits in the middle of the check is said with how it
// ended and what it wrote; one whose BookTicket never returns stops the
// check after the first row with no booking answered, in the time of
// that row's tries, not of every row's.
func TestAProgramThatDiesOrHangsIsSaid(t *testing.T) {
	dir := moduleAt(t, "", "func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n",
		"func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n\tif req.Quantity == 2 {\n\t\tfmt.Fprintln(os.Stderr, \"bye from the learner\")\n\t\tos.Exit(3)\n\t}\n",
		"import (\n", "import (\n\t\"os\"\n")
	rep := checkModule(t, dir, []string{"one-transaction", "replay"})
	if s := strings.Join(rep.Instances, "\n"); !strings.Contains(s, "exit status 3") || !strings.Contains(s, "bye from the learner") {
		t.Errorf("instances: %q", rep.Instances)
	}

	dir = moduleAt(t, "", "func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n",
		"func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n\tif req.Quantity == 2 {\n\t\t<-ctx.Done()\n\t}\n")
	rep, err := Check(t.Context(), dir, testDB, Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stopped := 0
	for _, st := range rep.Exercises {
		for _, r := range st.Rows {
			if strings.HasPrefix(r.Says, "could not run: the API gave no answer in ") {
				stopped++
			}
		}
	}
	if stopped < 8 {
		t.Errorf("%d rows stopped after the first silent one; the rows: %v", stopped, rep.Exercises)
	}
}

// A module whose booking.go is gone is restored: the harness, and the
// learner's files that are missing, as they start.
func TestAModuleWithoutBookingGoIsRestored(t *testing.T) {
	dir := moduleAt(t, "one-transaction")
	if err := os.Remove(filepath.Join(dir, "booking.go")); err != nil {
		t.Fatal(err)
	}
	if err := Restore(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "booking.go"))
	if err != nil || !strings.Contains(string(b), "TODO(one-transaction)") {
		t.Errorf("booking.go: %v %.80s", err, b)
	}
	if err := Restore(t.TempDir()); err == nil {
		t.Error("an empty directory was restored as a module")
	}
}

// The processes a learner's program starts end with it: one that keeps
// its standard error open holds the check up for no longer than a
// moment, and none outlives the check.
func TestTheProcessesAProgramStartsEndWithIt(t *testing.T) {
	const mark = "987654"
	dir := moduleAt(t, "one-transaction", "func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n",
		"func init() {\n\tc := exec.Command(\"sleep\", \""+mark+"\")\n\tc.Stderr = os.Stderr\n\t_ = c.Start()\n}\n\nfunc BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n",
		"import (\n", "import (\n\t\"os\"\n\t\"os/exec\"\n")
	rep := checkModule(t, dir, []string{"one-transaction"})
	if rep.Exercises[0].State != Passed {
		t.Errorf("one-transaction: %s %v", rep.Exercises[0].State, says(rep.Exercises[0].Rows))
	}
	if left := processesWith(t, mark); len(left) > 0 {
		t.Errorf("the program's sleep outlived the check: %v", left)
	}
}

// processesWith lists the processes whose command line holds arg.
func processesWith(t *testing.T, arg string) []string {
	t.Helper()
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), arg) {
			found = append(found, p+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// Without a go command, or with one too old to build the module, the
// check says so in one line that names what to install, as a report (a
// script's --json gets it), never as a failure of learn.
func TestAGoTooOldOrMissingIsSaid(t *testing.T) {
	dir := moduleAt(t, "one-transaction")
	for _, tc := range []struct{ name, script, want string }{
		{"no go", "", "there is no go command on PATH: install Go " + MinGo + " or newer"},
		{"go 1.15", "#!/bin/sh\necho 'go version go1.15 linux/amd64'\n", "and " + "GOBIN/go is go1.15: install a newer Go"},
		{"no GOVERSION", "#!/bin/sh\necho\n", "does not say its version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := t.TempDir()
			if tc.script != "" {
				if err := os.WriteFile(filepath.Join(bin, "go"), []byte(tc.script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", bin)
			rep, err := Check(t.Context(), dir, testDB, Options{Exercises: []string{"one-transaction"}})
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.ReplaceAll(tc.want, "GOBIN", bin); !strings.Contains(rep.Stopped, want) {
				t.Errorf("stopped: %q, want it to say %q", rep.Stopped, want)
			}
		})
	}
}

// A program that says it listens where it does not (a line of the
// learner's own before main.go's) is stopped, and said so: not taken for
// an API instance that another one answers for.
func TestAProgramThatListensElsewhereIsSaid(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	dir := moduleAt(t, "one-transaction", "func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n",
		"func init() { fmt.Println(\"listening on "+other.URL+"\") }\n\nfunc BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n")
	rep, err := Check(t.Context(), dir, testDB, Options{Exercises: []string{"one-transaction"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "said it listens on " + other.URL + ", but what answers there is not it"; !strings.Contains(rep.Stopped, want) {
		t.Errorf("stopped: %q, want it to say %q", rep.Stopped, want)
	}
}

// A booking answered and never committed is said in the learner's terms
// (their BookTicket, its COMMIT), not in learn check's config's.
func TestABookingNeverCommittedIsSaid(t *testing.T) {
	dir := moduleAt(t, "one-transaction", "return Answer{Booking: b}, tx.Commit(ctx)", "return Answer{Booking: b}, nil")
	rep := checkModule(t, dir, []string{"one-transaction"})
	rows := rep.Exercises[0].Rows
	if len(rows) == 0 || !strings.Contains(rows[0].Says, "is not in the bookings table: your BookTicket answered a booking it did not commit") || strings.Contains(rows[0].Says, "config") {
		t.Errorf("rows: %v", says(rows))
	}
}

// A go command that hangs is said so, within goVersionWithin; one stopped
// midway leaves no work directory: the build's own is removed.
func TestAGoThatHangsOrIsStoppedLeavesNothing(t *testing.T) {
	dir := moduleAt(t, "one-transaction")
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	write := func(script string) {
		if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("#!/bin/sh\nexec /bin/sleep 1005\n")
	defer goVersionWithin.set(goVersionWithin.get())
	goVersionWithin.set(300 * time.Millisecond)
	if _, err := Build(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") {
		t.Errorf("a go that hangs: %v", err)
	}
	// A go that makes its work directory and then waits to be stopped.
	write("#!/bin/sh\ncase \"$1\" in env) echo go1.26.0;; *) /bin/mkdir \"$GOTMPDIR/go-build1\" && exec /bin/sleep 1006;; esac\n")
	ctx, cancel := context.WithCancel(t.Context())
	built := make(chan error, 1)
	go func() { _, err := Build(ctx, dir); built <- err }()
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, ".learn", "gotmp-*", "go-build1")); len(m) > 0 {
			break
		}
	}
	cancel()
	<-built
	if left, _ := filepath.Glob(filepath.Join(dir, ".learn", "gotmp-*")); len(left) > 0 {
		t.Errorf("a stopped build left %v", left)
	}
	if left := processesWith(t, "1006"); len(left) > 0 {
		t.Errorf("the stopped go command runs on: %v", left)
	}
}
