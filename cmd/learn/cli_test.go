package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

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

// Every command line learn cannot take exits 2 with one message that says
// what to do, and where the usage is.
func TestBadCommandLinesSayWhatToDo(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"demo"}, 2, "demo takes one scenario name (lost-answer, concurrent-copies"},
		{[]string{"demo", "a", "b"}, 2, "demo takes one scenario name"},
		{[]string{"demo", "nope"}, 2, `unknown scenario "nope"; the scenarios are: lost-answer`},
		{[]string{"demo", "lost-answer", "--copies", "3"}, 2, "--copies is for concurrent-copies only"},
		{[]string{"demo", "concurrent-copies", "--copies", "1"}, 2, "--copies must be from 2 to 100, got 1"},
		{[]string{"demo", "concurrent-copies", "--copies", "500"}, 2, "--copies must be from 2 to 100, got 500"},
		{[]string{"demo", "concurrent-copies", "--copies", "two"}, 2, `--copies must be a whole number from 2 to 100, got "two"`},
		{[]string{"demo", "lost-answer", "--variant", "sideways"}, 2, `--variant "sideways": use correct or broken`},
		{[]string{"demo", "replay-after-sellout", "--variant", "broken"}, 2, "scenario replay-after-sellout has no broken variant; those that have one: lost-answer"},
		{[]string{"demo", "lost-answer", "--frob"}, 2, "unknown flag: --frob"},
		{[]string{"--theme", "pink"}, 2, `--theme "pink": use dark or light`},
		{[]string{"--theme"}, 2, "flag needs an argument: --theme"},
		{[]string{"play", "nope"}, 2, "the scenarios are"},
		{[]string{"play", "a", "b"}, 2, "play takes one scenario name, got a b"},
		{[]string{"play", "replay-after-sellout", "--variant", "broken"}, 2, "scenario replay-after-sellout has no broken variant; those that have one: lost-answer"},
		{[]string{"play", "last-seats", "--variant", "sideways"}, 2, "use correct or broken"},
		{[]string{"lesson", "nope"}, 2, `lesson: no page "nope"; the pages are: idempotency (lesson)`},
		{[]string{"lesson", "retry-across-instances"}, 2, `"retry-across-instances" is an interview page: run learn interview retry-across-instances`},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"; the commands are: `},
		{[]string{"docotr"}, 2, `unknown command "docotr": did you mean doctor?`},
		{[]string{"serve", "now"}, 2, "serve takes no names, got now"},
		{[]string{"version", "now"}, 2, "version takes no names, got now"},
		{[]string{"progress", "frob"}, 2, `progress: unknown "frob": use reset or export`},
		{[]string{"progress", "reset"}, 2, "progress reset asks first: answer at a terminal, or pass --yes"},
		{[]string{"progress", "--yes"}, 2, "unknown flag: --yes"},
		{[]string{"--postgres", "cloud"}, 2, `--postgres: unknown database mode "cloud": use one of auto, url, local, docker`},
		{[]string{}, 2, "learn demo lost-answer --json"},
		{[]string{"play"}, 2, "needs a terminal"},
		{[]string{"play", "last-seats", "--variant", "broken"}, 2, "needs a terminal"},
		{[]string{"race"}, 2, "needs a terminal"},
		{[]string{"race", "100"}, 2, "race takes no names, got 100"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("learn %v: code %d, stdout %q, stderr %q; want %d and %q", tt.args, code, out, errs, tt.code, tt.want)
		}
		if n := strings.Count(errs, "learn: "); n != 1 {
			t.Errorf("learn %v: the error is printed %d times:\n%s", tt.args, n, errs)
		}
		if strings.Contains(errs, "unknown flag") || strings.Contains(errs, "takes") {
			if hint := "Run 'learn " + tt.args[0] + " --help' for usage."; !strings.Contains(errs, hint) {
				t.Errorf("learn %v: stderr lacks %q:\n%s", tt.args, hint, errs)
			}
		}
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

// The root's help names every command, the scenarios, the environment and
// the exit codes; learn help prints it too.
func TestHelp(t *testing.T) {
	code, out, _ := runCLI(t, "--help")
	for _, want := range []string{"demo SCENARIO", "play [SCENARIO]", "lesson [SLUG]", "serve", "doctor", "progress", "version",
		"lost-answer, concurrent-copies", "--database-url", "--postgres", "--theme", "--present", "--version",
		"Exit codes:", "0    ok", "1    failure", "2    usage", "130  interrupted", "143  terminated"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("--help: exit %d, lacks %q", code, want)
		}
	}
	if strings.ContainsRune(out, '\x1b') {
		t.Error("the help printed to a pipe holds escape sequences")
	}
	if code, out, _ := runCLI(t, "help"); code != 0 || !strings.Contains(out, "demo SCENARIO") || !strings.Contains(out, "143  terminated") {
		t.Errorf("learn help: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "help", "demo"); code != 0 || !strings.Contains(out, "learn demo SCENARIO") {
		t.Errorf("learn help demo: exit %d\n%s", code, out)
	}
}

// --version, -v and learn version print one line, the build's version.
func TestVersion(t *testing.T) {
	want := "learn version " + version() + "\n"
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || out != want || errs != "" {
			t.Errorf("learn %v: exit %d, stdout %q, stderr %q; want %q", args, code, out, errs, want)
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
		if got := fullScreen(strings.Fields(args)); got != want {
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
		if got := childPostgres(strings.Fields(args)); got.Mode != want.Mode || got.DatabaseURL != want.DatabaseURL {
			t.Errorf("childPostgres(%q) = %+v, want %+v", args, got, want)
		}
	}
}

// An unreachable database is an error that names it; how soon learn gives
// up is pgtemp's connect timeout (urlConnectTimeout), not a clock here.
func TestUnreachableDatabaseFailsWithAClearMessage(t *testing.T) {
	code, _, errs := runCLI(t, "demo", "lost-answer", "--database-url", "postgres://learn@127.0.0.1:1/nowhere")
	if code != 1 || !strings.Contains(errs, "could not reach the PostgreSQL at 127.0.0.1:1") || strings.Contains(errs, "panic") {
		t.Errorf("code %d, stderr %q", code, errs)
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

// learn progress prints a summary, export the saved JSON, and reset forgets
// it (asking first, which needs a terminal, or at once with --yes).
func TestProgressCommands(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	path := state + "/learn/progress.json"
	store := &progress.Store{Path: path}
	if _, err := store.Update(func(p *progress.Progress) error { p.MarkRead("idempotency", time.Now()); return nil }); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "progress")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "Progress in "+path+"\n") {
		t.Errorf("progress: exit %d, stderr %q\n%s", code, errs, out)
	}
	code, out, _ = runCLI(t, "progress", "export")
	var exported map[string]any
	if err := json.Unmarshal([]byte(out), &exported); code != 0 || err != nil || !strings.Contains(out, "idempotency") {
		t.Errorf("progress export: exit %d, %v\n%s", code, err, out)
	}
	if code, _, errs := runCLI(t, "progress", "reset"); code != 2 || !strings.Contains(errs, "pass --yes") {
		t.Errorf("progress reset without a terminal: exit %d, stderr %q", code, errs)
	}
	if p, _, err := store.Load(); err != nil || len(p.Read) == 0 {
		t.Fatalf("a reset that was refused changed the progress: %+v, %v", p, err)
	}
	code, out, _ = runCLI(t, "progress", "reset", "--yes")
	if code != 0 || out != "Progress reset: learn starts over.\n" {
		t.Errorf("progress reset --yes: exit %d\n%s", code, out)
	}
	if p, _, err := store.Load(); err != nil || len(p.Read) != 0 {
		t.Errorf("after the reset: %+v, %v", p, err)
	}
}
