package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/learn-idempotency/learn/internal/workshop"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
)

// runCLI runs learn in process with stdout and stderr captured; neither is a
// terminal.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
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
	// The URL runs (in this process) left nothing in the server's database.
	if leftover := learnSchemasOfThisProcess(t); leftover != 0 {
		t.Errorf("%d learn_ schemas left behind", leftover)
	}
}

// Global flags work before and after the command, with a value as the next
// word or after =; no value is ever taken for the command.
func TestFlagsBeforeAndAfterTheCommand(t *testing.T) {
	for _, args := range [][]string{
		{"--theme", "light", "lesson"},
		{"lesson", "--theme", "light"},
		{"--theme=light", "lesson", "idempotency"},
		{"lesson", "idempotency", "--theme", "light", "--present"},
		{"--postgres", "local", "--database-url", "postgres://nobody@127.0.0.1:1/x", "lesson"},
	} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || !strings.HasPrefix(out, "# Idempotency") || errs != "" {
			t.Errorf("learn %v: code %d, stderr %q, stdout starts %q", args, code, errs, out[:min(len(out), 40)])
		}
	}
	// A flag's value is checked wherever the flag stands.
	for _, args := range [][]string{{"--theme", "pink", "lesson"}, {"lesson", "--theme", "pink"}} {
		if code, _, errs := runCLI(t, args...); code != 2 || !strings.Contains(errs, "use dark or light") {
			t.Errorf("learn %v: code %d, stderr %q", args, code, errs)
		}
	}
	// "light" and "local" are values, not commands: the command is play.
	for _, args := range [][]string{{"--theme", "light", "--postgres", "local", "play", "nope"}, {"play", "nope", "--postgres", "local", "--theme", "light"}} {
		if code, _, errs := runCLI(t, args...); code != 2 || !strings.Contains(errs, `unknown scenario "nope"`) {
			t.Errorf("learn %v: code %d, stderr %q", args, code, errs)
		}
	}
	// The URL before the command reaches the run: the report comes from it.
	rep := demoJSON(t, "--database-url", testDB.ConnString(), "lost-answer", "--json")
	if rep.Scenario != "lost-answer" || rep.BookingRows != 1 {
		t.Errorf("--database-url before demo: %+v", rep)
	}
}

// allCommands is every command of the tree a person can ask for help on,
// cobra's help and completion included, as argument lists.
func allCommands() [][]string {
	root := newRoot(&globals{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		out = append(out, path)
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(root, nil)
	return out
}

// --help and -h on every command exit 0 and print that command's usage.
func TestEveryCommandHasHelp(t *testing.T) {
	cmds := allCommands()
	if len(cmds) < 12 {
		t.Fatalf("only %d commands in the tree: %v", len(cmds), cmds)
	}
	root := newRoot(&globals{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, path := range cmds {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		about := strings.Fields(cmp.Or(c.Long, c.Short))
		for _, flag := range []string{"--help", "-h"} {
			args := append(slices.Clone(path), flag)
			code, out, errs := runCLI(t, args...)
			if code != 0 || errs != "" {
				t.Errorf("learn %v: code %d, stderr %q", args, code, errs)
			}
			for _, want := range []string{"USAGE", c.CommandPath(), strings.Join(about[:min(4, len(about))], " ")} {
				if !strings.Contains(out, want) {
					t.Errorf("learn %v lacks %q:\n%s", args, want, out)
				}
			}
		}
	}
}

func TestFormatVersion(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"v1.2.0", nil, "v1.2.0"},
		{"", nil, "(devel)"},
		{"(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, "(devel) (commit 0123456789ab)"},
		{"v0.0.0-20260101120000-0123456789ab+dirty", []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}},
			"v0.0.0-20260101120000-0123456789ab+dirty (commit 0123456789ab, modified)"},
		{"v1.2.0", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}, "v1.2.0 (commit abc)"},
	}
	for _, tt := range tests {
		info := &debug.BuildInfo{Main: debug.Module{Version: tt.main}, Settings: tt.settings}
		if got := formatVersion(info); got != tt.want {
			t.Errorf("formatVersion(%q, %v) = %q, want %q", tt.main, tt.settings, got, tt.want)
		}
	}
}

// The supervisor asks the command tree which command lines run the
// full-screen app, and which PostgreSQL a crashed child used.
func TestSupervisorReadsTheCommandTree(t *testing.T) {
	for args, want := range map[string]bool{
		"": true, "play": true, "--theme light play lost-answer": true, "lesson --present": true, "interview": true,
		"demo lost-answer": false, "--postgres local serve": false, "doctor": false, "progress reset": false,
		"help": false, "version": false,
	} {
		if got := inspect(strings.Fields(args)).fullScreen; got != want {
			t.Errorf("fullScreen(%q) = %v, want %v", args, got, want)
		}
	}
	t.Setenv("DATABASE_URL", "postgres://env@127.0.0.1/x")
	t.Setenv(envPostgres, "")
	for args, want := range map[string]pgtemp.Options{
		"":                                    {Mode: pgtemp.Auto, DatabaseURL: "postgres://env@127.0.0.1/x"},
		"--postgres local play":               {Mode: pgtemp.Local, DatabaseURL: "postgres://env@127.0.0.1/x"},
		"serve --addr :0 --database-url=u":    {Mode: pgtemp.Auto, DatabaseURL: "u"},
		"--theme light demo x --postgres url": {Mode: pgtemp.URL, DatabaseURL: "postgres://env@127.0.0.1/x"},
		"--database-url u2 --help":            {Mode: pgtemp.Auto, DatabaseURL: "u2"},
	} {
		if got := inspect(strings.Fields(args)).postgres; got.Mode != want.Mode || got.DatabaseURL != want.DatabaseURL {
			t.Errorf("childPostgres(%q) = %+v, want %+v", args, got, want)
		}
	}
}

func queryOne(t *testing.T, connString, sql string, dst any) error {
	t.Helper()
	return queryOneArgs(t, connString, sql, dst)
}

// queryOneArgs is queryOne with arguments for the query.
func queryOneArgs(t *testing.T, connString, sql string, dst any, args ...any) error {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), connString)
	if err != nil {
		return err
	}
	defer conn.Close(t.Context())
	return conn.QueryRow(t.Context(), sql, args...).Scan(dst)
}

// The supervisor reads a command line from one command tree, built once:
// whether the app takes the terminal, its first frame, and the PostgreSQL
// a crashed child used all come from that one reading.
func TestTheCommandTreeIsBuiltOncePerProcess(t *testing.T) {
	before := rootsBuilt.Load()
	cfg := supervisorConfig([]string{"--theme", "light", "play", "lost-answer"})
	cfg.FirstFrame(io.Discard) // no terminal here: it draws nothing, but reads what it would draw
	if n := rootsBuilt.Load() - before; n != 1 || !cfg.FullScreen {
		t.Errorf("the supervisor built %d command trees (full screen: %v), want 1", n, cfg.FullScreen)
	}
}

// The tests never read or change the person's own state (their progress,
// a killed workshop's summary and its notice, which learn doctor says
// once): learn's state directory in a test run is the run's own. Before,
// the doctor tests said, and so cleared, the notice of a workshop the
// person had running.
func TestTheTestsKeepThePersonsStateApart(t *testing.T) {
	for what, dir := range map[string]func() (string, error){"progress": progress.DefaultPath, "summaries": workshop.DefaultSummaryDir} {
		d, err := dir()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(d, os.TempDir()+string(filepath.Separator)) {
			t.Errorf("learn's %s here are in %s, outside the test run's temporary directory", what, d)
		}
	}
}
