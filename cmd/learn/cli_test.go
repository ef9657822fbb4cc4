package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/sim"
)

// runCLI runs learn in process with stdout and stderr captured; neither is a
// terminal.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPagesPrintAsPlainTextWhenPiped(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"lesson"}, []string{"# Idempotency", "## In 1 minute", "## Checkpoint", "## Try this", "Browser", "▶", "✕", "409",
			"learn play lost-answer", "learn demo concurrent-copies --copies 10 --json"}}, // commands are never split
		{[]string{"lesson", "idempotency"}, []string{"## Picture it"}},
		{[]string{"interview"}, []string{"## Say it in 30 seconds", "## Counter-questions", "23505"}},
		{[]string{"interview", "retry-across-instances"}, []string{"## Where in learn"}},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, tt.args...)
		if code != 0 || errs != "" {
			t.Fatalf("learn %v: code %d, stderr %q", tt.args, code, errs)
		}
		if strings.ContainsRune(out, '\x1b') {
			t.Errorf("learn %v printed an escape sequence", tt.args)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("learn %v lacks %q", tt.args, w)
			}
		}
		for i, line := range strings.Split(out, "\n") {
			if n := len([]rune(line)); n > 80 {
				t.Errorf("learn %v line %d is %d wide: %q", tt.args, i+1, n, line)
			}
		}
	}
}

func demoJSON(t *testing.T, args ...string) *sim.Report {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{"demo"}, args...)...)
	if code != 0 {
		t.Fatalf("learn demo %v: code %d, stderr %q", args, code, errs)
	}
	var rep sim.Report
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("learn demo %v: not one JSON report: %v\n%s", args, err, out)
	}
	if dec.More() {
		t.Fatalf("learn demo %v printed more than one object", args)
	}
	return &rep
}

// The headless runs give the source page's numbers, on a local throwaway
// cluster and on an existing server (a fresh schema in it).
func TestDemoJSON(t *testing.T) {
	for _, where := range [][]string{{"--postgres", "local"}, {"--database-url", testDB.ConnString()}} {
		rep := demoJSON(t, append([]string{"lost-answer", "--json"}, where...)...)
		if rep.Scenario != "lost-answer" || len(rep.Answers) != 1 || rep.Answers[0].Status != 200 ||
			!rep.Answers[0].Replayed || rep.Answers[0].BookingID == nil || rep.Lost != 1 || rep.BookingRows != 1 || rep.SeatsTaken != 2 {
			t.Errorf("lost-answer %v = %+v", where, rep)
		}
		rep = demoJSON(t, append([]string{"concurrent-copies", "--copies", "10", "--json"}, where...)...)
		ids, created := map[string]bool{}, 0
		for _, a := range rep.Answers {
			if a.Status != 200 || a.BookingID == nil {
				t.Fatalf("answer %+v", a)
			}
			ids[*a.BookingID] = true
			if !a.Replayed {
				created++
			}
		}
		if len(rep.Answers) != 10 || len(ids) != 1 || created != 1 || rep.Lost != 0 || rep.BookingRows != 1 || rep.SeatsTaken != 2 {
			t.Errorf("concurrent-copies %v = %+v", where, rep)
		}
	}
	// The URL runs left nothing in the server's database.
	var leftover int
	conn := testDB.ConnString()
	if err := queryOne(t, conn, `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'learn\_%'`, &leftover); err != nil {
		t.Fatal(err)
	}
	if leftover != 0 {
		t.Errorf("%d learn_ schemas left behind", leftover)
	}
}

func TestBadCommandLinesSayWhatToDo(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"demo"}, 2, "demo takes one scenario name"},
		{[]string{"demo", "nope"}, 2, `unknown scenario "nope"`},
		{[]string{"demo", "lost-answer", "--copies", "3"}, 2, "--copies is for concurrent-copies only"},
		{[]string{"demo", "concurrent-copies", "--copies", "1"}, 2, "--copies must be from 2 to 100"},
		{[]string{"demo", "concurrent-copies", "--copies", "101"}, 2, "--copies must be from 2 to 100"},
		{[]string{"demo", "lost-answer", "--variant", "sideways"}, 2, "use correct or broken"},
		{[]string{"--theme", "pink"}, 2, "use dark or light"},
		{[]string{"play", "nope"}, 2, "the scenarios are"},
		{[]string{"lesson", "nope"}, 2, "idempotency"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"--postgres", "cloud"}, 2, "auto"},
		{[]string{}, 2, "learn demo lost-answer --json"},
		{[]string{"play"}, 2, "needs a terminal"},
	}
	for _, tt := range tests {
		code, _, errs := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("learn %v: code %d, stderr %q; want %d and %q", tt.args, code, errs, tt.code, tt.want)
		}
	}
}

func TestUnreachableDatabaseFailsFastWithAClearMessage(t *testing.T) {
	start := time.Now()
	code, _, errs := runCLI(t, "demo", "lost-answer", "--database-url", "postgres://learn@127.0.0.1:1/nowhere")
	if code != 1 || !strings.Contains(errs, "127.0.0.1:1") || strings.Contains(errs, "panic") {
		t.Errorf("code %d, stderr %q", code, errs)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s to give up", d)
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		args []string
		cmd  string
		rest []string
	}{
		{nil, "", nil},
		{[]string{"demo", "lost-answer", "--json"}, "demo", []string{"lost-answer", "--json"}},
		{[]string{"--present", "play", "lost-answer"}, "play", []string{"--present", "lost-answer"}},
		{[]string{"--theme", "light", "lesson"}, "lesson", []string{"--theme", "light"}},
		{[]string{"--theme=light", "lesson"}, "lesson", []string{"--theme=light"}},
		{[]string{"--postgres", "local", "--database-url", "postgres://x", "doctor"}, "doctor", []string{"--postgres", "local", "--database-url", "postgres://x"}},
		{[]string{"--theme", "light"}, "", []string{"--theme", "light"}},
	}
	for _, tt := range tests {
		cmd, rest := splitCommand(tt.args)
		if cmd != tt.cmd || strings.Join(rest, " ") != strings.Join(tt.rest, " ") {
			t.Errorf("splitCommand(%q) = %q %q, want %q %q", tt.args, cmd, rest, tt.cmd, tt.rest)
		}
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI(t, "help")
	if code != 0 || !strings.Contains(out, "learn demo SCENARIO") || !strings.Contains(out, "lost-answer, concurrent-copies") {
		t.Errorf("help: %d %q", code, out)
	}
}

func queryOne(t *testing.T, connString, sql string, dst any) error {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), connString)
	if err != nil {
		return err
	}
	defer conn.Close(t.Context())
	return conn.QueryRow(t.Context(), sql).Scan(dst)
}
