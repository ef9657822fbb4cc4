package exercises

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/sim/check"
)

// runModule writes the module (the learner's start, or learn's reference
// solution), builds it, creates its tables in a fresh schema, starts two
// API instances of it there, and runs every scenario of learn check
// against them with the example config.
func runModule(t *testing.T, solution bool) *check.Result {
	t.Helper()
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "learn-exercises")
	if err := Write(dir, solution); err != nil {
		t.Fatal(err)
	}
	bin, err := Build(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := testDB.NewSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = schema.Drop(context.WithoutCancel(ctx)) })
	sql, err := os.ReadFile(filepath.Join(dir, "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, schema.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, string(sql)); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	var urls []string
	for range 2 {
		inst, err := Start(ctx, bin, schema.ConnString())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(inst.Stop)
		urls = append(urls, inst.URL)
	}
	cfg, err := check.Parse([]byte(strings.Replace(check.Example, `urls = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]`, fmt.Sprintf("urls = [%q, %q]", urls[0], urls[1]), 1)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Run(ctx, cfg, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// learn's reference solution, written as a learner's module and run as
// two API instances of its own program, passes every scenario of learn
// check: the harness speaks the example config's shape, and the judge is
// learn check's.
func TestTheReferenceSolutionPassesEveryCheck(t *testing.T) {
	res := runModule(t, true)
	for _, row := range res.Rows {
		if row.State != check.Pass {
			t.Errorf("%s: %s %s; failed %v", row.Name, row.State, row.Says, row.Failed)
		}
	}
	if res.Passed != len(check.Names()) {
		t.Errorf("%s", res.Summary)
	}
}

// The module as the learner gets it builds, and books every request it is
// sent: a retry after a lost answer books again, which the lost answer's
// row says in the user's words.
func TestTheStartFailsTheLostAnswer(t *testing.T) {
	res := runModule(t, false)
	i := slices.IndexFunc(res.Rows, func(r check.Row) bool { return r.Name == "lost-answer" })
	if row := res.Rows[i]; row.State != check.Fail || !strings.Contains(row.Says, "charged more than once") {
		t.Errorf("lost-answer: %s %q", row.State, row.Says)
	}
}
