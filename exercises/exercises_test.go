package exercises

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/check"
)

// moduleAt writes the learner's module into a new directory with the
// reference solution of the exercise after (testdata/steps/after; "" is
// the module's start, last the module's own solution) in place of
// booking.go (and schema.sql when the step has one), and edits applied
// to booking.go: pairs of the text to find and what replaces it.
func moduleAt(t testing.TB, after string, edits ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "learn-exercises")
	if err := Write(dir, after == Ladder[len(Ladder)-1].ID); err != nil {
		t.Fatal(err)
	}
	if after != "" && after != Ladder[len(Ladder)-1].ID {
		// Each step's folder holds the files its exercise changed: the
		// steps up to after, in order, make its reference. Where a file
		// is already the module's solution (the tables of per-user, the
		// client), it is read from there.
		fromSolution := map[string]string{"per-user/schema.sql": "solution.sql", "client/client.go": "solution_client.go"}
		for _, e := range Ladder {
			for _, name := range []string{"booking.go", "schema.sql", "client.go"} {
				path := filepath.Join("testdata", "steps", e.ID, name)
				if sol, ok := fromSolution[e.ID+"/"+name]; ok {
					path = filepath.Join("module", sol)
				}
				b, err := os.ReadFile(path)
				if os.IsNotExist(err) {
					continue
				}
				b = []byte(strings.TrimPrefix(string(b), "//go:build solution\n\n"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if e.ID == after {
				break
			}
		}
	}
	for i := 0; i+1 < len(edits); i += 2 {
		file, find := "booking.go", edits[i]
		for _, other := range []string{"schema.sql", "client.go"} {
			if f, ok := strings.CutPrefix(find, other+":"); ok {
				file, find = other, f
			}
		}
		path := filepath.Join(dir, file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), find) {
			t.Fatalf("%s of step %s does not hold %q", file, after, find)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), find, edits[i+1], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkModule checks dir's module (the exercises ids; nil: all) on the
// package's PostgreSQL.
func checkModule(t *testing.T, dir string, ids []string) *Report {
	t.Helper()
	rep, err := Check(t.Context(), dir, testDB, Options{Exercises: ids})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stopped != "" {
		t.Fatalf("the module did not run: %s", rep.Stopped)
	}
	return rep
}

// Each rung of the ladder, checked live: the module's start and each
// exercise's reference solution pass every exercise up to it, and fail
// every check of the exercise after it (which they are the start of);
// the last reference passes them all.
func TestTheLadder(t *testing.T) {
	steps := []string{""}
	for _, e := range Ladder {
		steps = append(steps, e.ID)
	}
	for n, after := range steps {
		name := after
		if name == "" {
			name = "start"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep := checkModule(t, moduleAt(t, after), nil)
			for _, st := range rep.Exercises {
				t.Logf("%s %s %v", st.ID, st.State, says(st.Rows))
			}
			for i, st := range rep.Exercises {
				switch {
				case i < n && st.State != Passed:
					t.Errorf("%s: %s, want passed: %v", st.ID, st.State, says(st.Rows))
				case i == n:
					for _, row := range st.Rows {
						if row.State == check.Pass {
							t.Errorf("%s's start passes %s: %s", st.ID, row.Name, row.Says)
						}
						// learn's client sends once where OneTry says so:
						// it gave up on nothing it could retry.
						if st.OneTry && slices.Contains(row.Failed, sim.InvNoAnswerRetried) {
							t.Errorf("%s, one try: %s blames the client: %v", st.ID, row.Name, row.Failed)
						}
					}
				}
			}
			if want := min(n, len(Ladder)); rep.Passed != want {
				t.Errorf("passed %d exercises, want %d", rep.Passed, want)
			}
			if n < len(Ladder) && rep.Current != Ladder[n].ID {
				t.Errorf("current exercise %q, want %q", rep.Current, Ladder[n].ID)
			}
		})
	}
}

// says is each row's name, mark and verdict.
func says(rows []check.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Name+" "+r.State.Mark()+" "+r.Says)
	}
	return out
}

// Wrong solutions a learner would plausibly write, two or more per
// exercise, each held to fail its exercise with the verdict a learner
// should read.
func TestWrongSolutionsFailWithTheirVerdict(t *testing.T) {
	// The reference's retry of a serialization failure, which the wrong
	// solutions of the isolation exercise replace.
	const loop = "\tfor try := 1; try < 5 && errors.As(err, &pe) && pe.Code == \"40001\"; try++ {\n\t\ta, err = bookOnce(ctx, db, req)\n\t}\n"
	cases := []struct {
		exercise, name string
		// from is the step whose reference the edits apply to ("": the
		// exercise's own).
		from  string
		edits []string
		// fails is the check that must fail, and says what its verdict
		// says.
		fails, says string
	}{
		{"one-transaction", "the seats taken outside the transaction", "", []string{
			"tx.Exec(ctx, `UPDATE events", "db.Exec(ctx, `UPDATE events",
		}, "crash-before-commit", "seats"},
		{"one-transaction", "two transactions, one per write", "", []string{
			"	b := Booking{", "	if err := tx.Commit(ctx); err != nil {\n\t\treturn Answer{}, err\n\t}\n\tif tx, err = db.Begin(ctx); err != nil {\n\t\treturn Answer{}, err\n\t}\n\tb := Booking{",
		}, "crash-before-commit", "seats"},
		{"one-transaction", "the booking inserted outside the transaction", "", []string{
			"err = tx.QueryRow(ctx, `INSERT INTO bookings", "err = db.QueryRow(ctx, `INSERT INTO bookings",
		}, "crash-before-commit", "charged more than once"},
		{"one-transaction", "a write that changes nothing before the transaction", "one-transaction", []string{
			"	tx, err := db.Begin(ctx)\n", "	_, _ = db.Exec(ctx, `UPDATE events SET seats_left = seats_left WHERE false`)\n\ttx, err := db.Begin(ctx)\n",
			"tx.Exec(ctx, `UPDATE events", "db.Exec(ctx, `UPDATE events",
		}, "crash-before-commit", "seats"},
		{"one-transaction", "the booking outside the transaction, under a unique constraint", "", []string{
			"err = tx.QueryRow(ctx, `INSERT INTO bookings", "err = db.QueryRow(ctx, `INSERT INTO bookings",
			"schema.sql:    created_at      timestamptz NOT NULL\n", "    created_at      timestamptz NOT NULL,\n    CONSTRAINT bookings_key UNIQUE (user_id, idempotency_key)\n",
		}, "crash-before-commit", "500"},
		{"replay", "the lookup finds the booking and books again", "", []string{
			"	if err == nil {\n\t\treturn Answer{Booking: b, Replayed: true}, nil\n\t}\n\tif !errors.Is(err, pgx.ErrNoRows) {",
			"	if err != nil && !errors.Is(err, pgx.ErrNoRows) {",
		}, "lost-answer", "charged more than once"},
		{"replay", "the booking found, answered empty", "", []string{
			"		return Answer{Booking: b, Replayed: true}, nil\n", "		_ = b\n",
		}, "lost-answer", "a booking that the table does not hold"},
		{"replay", "a replay answered 409 as a duplicate", "", []string{
			"		return Answer{Booking: b, Replayed: true}, nil\n", "		return Answer{}, &Refusal{Status: 409, Code: \"duplicate\", Message: \"already booked\"}\n",
		}, "lost-answer", "409"},
		{"under-lock", "the lock taken, the lookup still after the seat check", "replay", []string{
			"WHERE id = $1`", "WHERE id = $1 FOR UPDATE`",
		}, "last-seats", "Not enough seats"},
		{"under-lock", "the lookup before the seat check, with no lock", "", []string{
			"WHERE id = $1 FOR UPDATE`", "WHERE id = $1`",
		}, "lookup-before-lock", "more than once"},
		{"compare", "the event compared, the quantity not", "", []string{
			"b.EventID != req.EventID || b.Quantity != req.Quantity", "b.EventID != req.EventID",
		}, "different-quantity", "quantity"},
		{"compare", "another request with the key booked as new", "", []string{
			"		return replay(b, req)\n", "		if b.EventID == req.EventID && b.Quantity == req.Quantity {\n\t\t\treturn replay(b, req)\n\t\t}\n",
		}, "different-quantity", ""},
		{"constraint", "the key unique per event", "", []string{
			"schema.sql:UNIQUE (idempotency_key)", "UNIQUE (event_id, idempotency_key)",
		}, "key-reuse-two-events", ""},
		{"constraint", "the winner answered without the comparison", "", []string{
			"		return replay(b, req)\n	}\n	return a, err", "		return Answer{Booking: b, Replayed: true}, nil\n	}\n	return a, err",
		}, "key-reuse-two-events", ""},
		{"constraint", "the unique violation answered 500", "", []string{
			"		b, err := find(ctx, db, req)\n\t\tif err != nil {\n\t\t\treturn Answer{}, err\n\t\t}\n\t\treturn replay(b, req)\n", "		return Answer{}, err\n",
		}, "key-reuse-two-events", "500"},
		{"per-user", "the lookup per user, the constraint on the key alone", "", []string{
			"schema.sql:UNIQUE (user_id, idempotency_key)", "UNIQUE (idempotency_key)",
		}, "two-users-same-key", "failed on every try"},
		{"client", "a refusal sent again", "", []string{
			"client.go:		if status < 500 {", "		if status < 400 {",
		}, "client-refusal", "a final refusal was sent again"},
		{"client", "a 5xx taken as final", "", []string{
			"client.go:		if status < 500 {", "		if true {",
		}, "client-server-error", "was never tried again"},
		{"client", "a network error taken as final", "", []string{
			"client.go:			status, body, err = 0, nil, derr\n\t\t\tcontinue\n", "			return 0, nil, derr\n",
		}, "client-lost-answer", "left without an answer"},
		{"client", "no wait between the tries", "", []string{
			"client.go:wait(ctx, Backoff[try-2])", "wait(ctx, 0)",
		}, "client-lost-answer", "sent again too soon"},
		{"client", "no end to the tries", "", []string{
			"client.go:	for try := 1; try <= len(Backoff)+1; try++ {", "	for try := 1; try <= 10; try++ {",
			"client.go:wait(ctx, Backoff[try-2])", "wait(ctx, Backoff[min(try-2, len(Backoff)-1)])",
		}, "client-gives-up", "more than 3 times"},
		{"isolation", "the 40001 tried again inside the failed transaction", "", []string{
			loop, "",
			"FOR UPDATE`, req.EventID).Scan(&left)\n",
			"FOR UPDATE`, req.EventID).Scan(&left)\n\tfor try := 0; try < 5 && err != nil && strings.Contains(err.Error(), \"40001\"); try++ {\n\t\terr = tx.QueryRow(ctx, `SELECT seats_left FROM events WHERE id = $1 FOR UPDATE`, req.EventID).Scan(&left)\n\t}\n",
			"import (\n", "import (\n\t\"strings\"\n",
		}, "concurrent-copies", "current transaction is aborted"},
		{"isolation", "the 40001 answered 409, try again", "", []string{
			loop, "\tif errors.As(err, &pe) && pe.Code == \"40001\" {\n\t\treturn Answer{}, &Refusal{Status: 409, Code: \"busy\", Message: \"Try again\"}\n\t}\n",
		}, "concurrent-copies", "409 Try again"},
		{"isolation", "the transaction begun at READ COMMITTED", "", []string{
			loop, "", "tx, err := db.Begin(ctx)", "tx, err := db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})",
		}, "concurrent-copies", "your transaction chose READ COMMITTED"},
		{"per-user", "the constraint per user, the lookup by the key alone", "", []string{
			"WHERE user_id = $1 AND idempotency_key = $2`, req.UserID, req.Key", "WHERE idempotency_key = $1`, req.Key",
		}, "two-users-same-key", ""},
	}
	for _, tc := range cases {
		t.Run(tc.exercise+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			e, err := Find(tc.exercise)
			if err != nil {
				t.Fatal(err)
			}
			from := tc.from
			if from == "" {
				from = e.ID
			}
			rep := checkModule(t, moduleAt(t, from, tc.edits...), []string{e.ID})
			i := slices.IndexFunc(rep.Exercises, func(s Status) bool { return s.ID == e.ID })
			st := rep.Exercises[i]
			j := slices.IndexFunc(st.Rows, func(r check.Row) bool { return r.Name == tc.fails })
			if st.State != Failing || j < 0 || st.Rows[j].State == check.Pass || !strings.Contains(st.Rows[j].Says, tc.says) {
				t.Errorf("%s: %s, want %s failing and saying %q: %v", e.ID, st.State, tc.fails, tc.says, says(st.Rows))
			}
			t.Logf("%v", says(st.Rows))
		})
	}
}

// A module named by a relative directory (learn exercises init writes
// ./learn-exercises, and learn exercises checks it there) builds its
// program where Check runs it: every save is the program checked.
func TestARelativeDirectoryRunsTheProgramItBuilt(t *testing.T) {
	dir := moduleAt(t, "one-transaction")
	t.Chdir(filepath.Dir(dir))
	rep := checkModule(t, filepath.Base(dir), []string{"one-transaction"})
	if rep.Exercises[0].State != Passed {
		t.Fatalf("one-transaction: %s %v", rep.Exercises[0].State, says(rep.Exercises[0].Rows))
	}
	if _, err := os.Stat(filepath.Join(dir, ".learn", "booking-api")); err != nil {
		t.Errorf("the program is not in the module's .learn: %v", err)
	}
}

// Every exercise's TODO is where the exercise says to write it: each file
// its File names holds a TODO(id) line in the module init writes.
func TestEveryExerciseHasItsTODO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	if err := Write(dir, false); err != nil {
		t.Fatal(err)
	}
	for _, e := range Ladder {
		for _, name := range strings.Split(e.File, " and ") {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("%s: %v", e.ID, err)
				continue
			}
			if !strings.Contains(string(b), "TODO("+e.ID+")") {
				t.Errorf("%s says to write it in %s, which holds no TODO(%s)", e.ID, name, e.ID)
			}
		}
	}
}
