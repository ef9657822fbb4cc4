package exercises

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/sim/check"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// played is one step of a playback as a screen shows it: the step, and
// the committed rows read while it was held.
type played struct {
	ev   trace.Event
	rows engine.Rows
}

// playAll plays the check named name of exercise id on dir to its end,
// reading the rows at each step before releasing it.
func playAll(t *testing.T, dir, id, name string) ([]played, check.Row, string) {
	t.Helper()
	e, err := Find(id)
	if err != nil {
		t.Fatal(err)
	}
	p := Play(t.Context(), dir, testDB, e, name)
	t.Cleanup(p.Stop)
	var steps []played
	for ev := range p.Events() {
		if !ev.Kind.IsStep() {
			continue
		}
		rows, err := p.Rows(t.Context())
		if err != nil {
			t.Fatalf("rows at step %d (%s): %v", len(steps)+1, ev.Text, err)
		}
		steps = append(steps, played{ev, rows})
		if err := p.Release(t.Context()); err != nil {
			t.Fatalf("release of step %d (%s): %v", len(steps), ev.Text, err)
		}
	}
	row, stopped, err := p.Result()
	if err != nil {
		t.Fatal(err)
	}
	return steps, row, stopped
}

// A check played on the learner's code goes one step at a time: each
// statement of theirs is held before PostgreSQL gets it, so the rows read
// while their COMMIT is on screen have no booking yet, and those read at
// the next step have it; the run is judged as the check judges it.
func TestAPlayHoldsTheLearnersStatements(t *testing.T) {
	steps, row, stopped := playAll(t, moduleAt(t, "replay"), "replay", "lost-answer")
	if stopped != "" {
		t.Fatalf("stopped: %s", stopped)
	}
	if row.State != check.Pass {
		t.Errorf("lost-answer played: %s %s, want a pass", row.State, row.Says)
	}
	var texts []string
	for _, s := range steps {
		texts = append(texts, string(s.ev.Kind)+" "+s.ev.Text)
	}
	commit := slices.IndexFunc(steps, func(s played) bool {
		return s.ev.Kind == trace.KindStatement && strings.EqualFold(s.ev.Label, "COMMIT")
	})
	insert := slices.IndexFunc(steps, func(s played) bool {
		return s.ev.Kind == trace.KindStatement && strings.Contains(strings.ToLower(s.ev.SQL), "insert into bookings")
	})
	if commit < 0 || insert < 0 || insert > commit || commit+1 >= len(steps) {
		t.Fatalf("no INSERT then COMMIT of the learner's among the steps: %q", texts)
	}
	if n := len(steps[commit].rows.Bookings); n != 0 {
		t.Errorf("while the COMMIT is held, %d bookings are committed, want 0: %q", n, texts)
	}
	if n := len(steps[commit+1].rows.Bookings); n != 1 {
		t.Errorf("after the COMMIT, %d bookings are committed, want 1: %q", n, texts)
	}
	if s := steps[commit]; s.ev.From != trace.LaneAPI(1) || s.ev.To != trace.LanePostgres || s.ev.Intent != 1 || s.ev.Try != 1 {
		t.Errorf("the COMMIT step is from %s to %s for #%d.%d, want api-1 to postgres for #1.1", s.ev.From, s.ev.To, s.ev.Intent, s.ev.Try)
	}
	sends := 0
	for _, s := range steps {
		if s.ev.Kind == trace.KindSend {
			sends++
		}
	}
	if sends != 2 {
		t.Errorf("%d tries sent, want 2 (the lost answer, then the retry): %q", sends, texts)
	}
}

// A race played runs once, its copies' statements in lockstep: where no
// lock orders them, both lookups go before either insert, and the wrong
// solution fails as its check does, in the one run; with the row lock,
// the second copy waits for the first's COMMIT (the play goes on while it
// waits) and is answered its booking.
func TestAPlayedRaceGoesInLockstep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edits []string
		want  check.State
	}{
		{"no lock", []string{"WHERE id = $1 FOR UPDATE`", "WHERE id = $1`"}, check.Fail},
		{"the row lock", nil, check.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			steps, row, stopped := playAll(t, moduleAt(t, "under-lock", tc.edits...), "under-lock", "lookup-before-lock")
			if stopped != "" {
				t.Fatalf("stopped: %s", stopped)
			}
			var texts []string
			lookups, inserts := map[int]int{}, map[int]int{}
			for i, s := range steps {
				texts = append(texts, s.ev.Text)
				sql := strings.ToLower(s.ev.SQL)
				switch {
				case s.ev.Kind != trace.KindStatement:
				case strings.HasPrefix(sql, "select") && strings.Contains(sql, "from bookings"):
					lookups[s.ev.Copy] = i
				case strings.HasPrefix(sql, "insert into bookings"):
					inserts[s.ev.Copy] = i
				}
			}
			if row.State != tc.want || row.Round > 1 {
				t.Errorf("played: %s (round %d) %s, want %s in one round", row.State, row.Round, row.Says, tc.want)
			}
			if len(lookups) != 2 {
				t.Fatalf("lookups of %d copies, want 2: %q", len(lookups), texts)
			}
			if tc.want == check.Fail {
				if len(inserts) != 2 || max(lookups[1], lookups[2]) > min(inserts[1], inserts[2]) {
					t.Errorf("not in lockstep: lookups at steps %v, inserts at %v: %q", lookups, inserts, texts)
				}
				if n := len(steps[len(steps)-1].rows.Bookings); n != 2 {
					t.Errorf("at the last answer, %d bookings committed, want the race's 2", n)
				}
			} else if len(inserts) != 1 {
				t.Errorf("%d copies inserted, want 1: %q", len(inserts), texts)
			}
		})
	}
}

// Stopped midway, a play leaves nothing: its schema is dropped and a
// release after it fails at once.
func TestAStoppedPlayLeavesNothing(t *testing.T) {
	e, _ := Find("replay")
	p := Play(t.Context(), moduleAt(t, "replay"), testDB, e, "lost-answer")
	ev, ok := <-p.Events()
	if !ok || !ev.Kind.IsStep() {
		t.Fatalf("first event %+v (ok %v), want a held step", ev, ok)
	}
	before := schemas(t)
	p.Stop()
	if after := schemas(t); after != before-1 {
		t.Errorf("%d learn schemas after Stop, want %d", after, before-1)
	}
	if err := p.Release(context.Background()); err == nil {
		t.Error("a release after Stop succeeded")
	}
	if _, err := p.Rows(t.Context()); err == nil {
		t.Error("rows read after Stop")
	}
}

// schemas counts the schemas learn made on the test database.
func schemas(t *testing.T) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testDB.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'learn\_%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A play never stops for good: ten copies, more than the instance's pool
// has connections, go on while some wait for a connection; and copies
// held up by the learner's own lock (a mutex around BookTicket), which
// PostgreSQL does not see, go on after a moment without them.
func TestAPlayedRaceNeverStopsForGood(t *testing.T) {
	for _, tc := range []struct {
		name, check string
		edits       []string
	}{
		{"ten copies, a pool of four", "concurrent-copies", nil},
		{"the learner's own mutex", "lookup-before-lock", []string{
			"func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n",
			"var one sync.Mutex\n\nfunc BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n\tone.Lock()\n\tdefer one.Unlock()\n",
			"import (\n", "import (\n\t\"sync\"\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			steps, row, stopped := playAll(t, moduleAt(t, "under-lock", tc.edits...), "under-lock", tc.check)
			if stopped != "" {
				t.Fatalf("stopped: %s", stopped)
			}
			if row.State != check.Pass {
				t.Errorf("%s played: %s %s, want a pass", tc.check, row.State, row.Says)
			}
			answers := 0
			for _, s := range steps {
				if s.ev.Kind == trace.KindAnswer {
					answers++
				}
			}
			if answers < 2 {
				t.Errorf("%d answers among %d steps, want every copy's", answers, len(steps))
			}
		})
	}
}

// A program that exits during a play is said with the row, as the check
// says it: how it ended and what it wrote.
func TestAPlayOfAProgramThatExitsSaysHow(t *testing.T) {
	dir := moduleAt(t, "replay", "func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n",
		"func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n\tif req.Quantity == 2 {\n\t\tfmt.Fprintln(os.Stderr, \"bye from the learner\")\n\t\tos.Exit(3)\n\t}\n",
		"import (\n", "import (\n\t\"os\"\n")
	_, row, stopped := playAll(t, dir, "replay", "lost-answer")
	if said := stopped + row.Says; !strings.Contains(said, "exit status 3") || !strings.Contains(said, "bye from the learner") {
		t.Errorf("stopped %q, row %s %q: want how api-1 ended and what it wrote", stopped, row.State, row.Says)
	}
}

// A play whose requests stop moving with none held (the learner's code
// sleeps outside any statement) is stopped after stuckAfter, and says
// why: it never waits in silence for good.
func TestAPlayThatStopsMovingIsStoppedAndSaid(t *testing.T) {
	defer stuckAfter.set(stuckAfter.get())
	stuckAfter.set(time.Second)
	dir := moduleAt(t, "replay", "func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n",
		"func BookTicket(ctx context.Context, db *pgxpool.Pool, req Request) (Answer, error) {\n\tif req.Quantity == 2 {\n\t\t<-ctx.Done()\n\t}\n")
	e, _ := Find("replay")
	p := Play(t.Context(), dir, testDB, e, "lost-answer")
	t.Cleanup(p.Stop)
	for ev := range p.Events() {
		if ev.Kind.IsStep() {
			_ = p.Release(t.Context()) // fails once the play is stopped
		}
	}
	_, stopped, _ := p.Result()
	if !strings.Contains(stopped, "the play stopped: nothing moved for 1s, and request #1.1 waits in your code on something that is not a statement") {
		t.Errorf("stopped: %q", stopped)
	}
}
