package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the command-line cases of testdata/script, each a
// txtar file: learn's command lines and what they print, as a person types
// them (testscript, as soft-serve's tests do). Each script has a home and
// a state directory of its own, no terminal, the test PostgreSQL as its
// DATABASE_URL, and these commands besides testscript's own:
//
//	status N   the last learn run exited N
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// testscript removes each script's directory but leaves its own
		// root in the temp directory: t.TempDir removes both.
		WorkdirRoot: t.TempDir(),
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, "cache"))
			env.Setenv("DATABASE_URL", testDB.ConnString())
			env.Setenv("LEARN_POSTGRES", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: status N")
				}
				got := strings.TrimSpace(ts.ReadFile(filepath.Join(ts.Getenv("WORK"), ".status")))
				if (got == args[0]) == neg {
					ts.Fatalf("learn exited %s, want %s%s", got, map[bool]string{true: "other than ", false: ""}[neg], args[0])
				}
			},
		},
	})
}
