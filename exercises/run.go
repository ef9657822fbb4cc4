package exercises

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim/check"
)

// State is an exercise's state after a check.
type State string

// The states.
const (
	Passed  State = "passed"  // its checks and every earlier exercise's pass
	Failing State = "failing" // one of its checks does not pass
	Waiting State = "waiting" // its checks pass, an earlier exercise's do not
	Unrun   State = "not run" // the module did not build or start
)

// Status is one exercise's state in a Report, with its check rows and
// the statements the learner's code sent in each.
type Status struct {
	Exercise
	State State       `json:"state"`
	Rows  []check.Row `json:"rows"`
	// SQL is, by check row, the statements the learner's code sent for
	// the row's requests (of the round judged), in the order sent.
	SQL map[string][]Statement `json:"sql"`
}

// Report is one check of a learner's module: its build, and each
// exercise's state from learn check's rows (one judge).
type Report struct {
	Dir string `json:"dir"`
	// Stopped is why no check ran: the compiler's output for a build that
	// failed, the error of schema.sql, or an instance that did not start.
	Stopped   string   `json:"stopped,omitempty"`
	Exercises []Status `json:"exercises"`
	// Current is the first exercise that has not passed ("" when all
	// have).
	Current string `json:"current"`
	// Passed counts the exercises passed.
	Passed int    `json:"passed"`
	Took   string `json:"took"`
	// Instances says, of each API instance that ended during the check
	// or wrote to standard error, how it ended and the end of what it
	// wrote: what explains a row with no answer.
	Instances []string `json:"instances,omitempty"`
}

// Record keeps each checked exercise's state in p (at t): what the
// progress saves of a check, whichever command or screen made it.
func (r *Report) Record(p *progress.Progress, t time.Time) {
	if r.Stopped != "" {
		return
	}
	for _, st := range r.Exercises {
		if st.State != Unrun {
			p.SetExercise(st.ID, string(st.State), st.State == Passed, t)
		}
	}
}

// Options are a check's.
type Options struct {
	// Exercises are the ids of the exercises to check (nil: all).
	Exercises []string
	// Done, when set, is told each check row as soon as it is known, with
	// the exercise it is of.
	Done func(exercise string, row check.Row)
	// Timeout bounds each try of the learner's API; 0 is 5 s.
	Timeout time.Duration
	// Phase, when set, is told what the check does next: "building",
	// "creating the tables", "starting two API instances", "checking".
	Phase func(string)
}

// Check builds the module in dir, creates its tables (schema.sql) in a
// schema of its own on srv, and for each isolation level the exercises
// ask of the database starts two API instances of it there and runs
// their checks against them with learn check's runner and example
// config; it says each exercise's state. A module that does not build or
// start is a Report that says why, not an error; the error is for a check
// that could not be made (no database, ctx ended). Nothing it started
// outlives it: the instances are stopped and the schema dropped.
func Check(ctx context.Context, dir string, srv *pgtemp.Server, opts Options) (*Report, error) {
	began := time.Now()
	rep := &Report{Dir: dir, Exercises: []Status{}}
	finish := func() (*Report, error) {
		rep.Took = time.Since(began).Round(time.Millisecond).String()
		return rep, nil
	}
	stopped := func(why string) (*Report, error) {
		rep.Stopped = why
		for _, e := range Ladder {
			rep.Exercises = append(rep.Exercises, Status{Exercise: e, State: Unrun, Rows: []check.Row{}, SQL: map[string][]Statement{}})
		}
		rep.Current = Ladder[0].ID
		return finish()
	}
	phase := func(p string) {
		if opts.Phase != nil {
			opts.Phase(p)
		}
	}
	phase("building")
	bin, err := Build(ctx, dir)
	if be, ok := errors.AsType[*BuildError](err); ok {
		return stopped(be.Error())
	}
	if err != nil && ctx.Err() == nil {
		return stopped(err.Error()) // no go command, or one too old: said as a build is
	}
	if err != nil {
		return nil, err
	}
	schema, err := srv.NewSchema(ctx)
	if err != nil {
		return nil, err
	}
	defer dropSchema(ctx, schema)
	phase("creating the tables")
	if why, err := createTables(ctx, dir, schema.ConnString()); err != nil || why != "" {
		if err != nil {
			return nil, err
		}
		return stopped(why)
	}
	rows := map[string][]check.Row{}
	sql := map[string]map[string][]Statement{}
	for _, p := range passes(opts.Exercises) {
		why, err := runPass(ctx, bin, schema.ConnString(), p, opts, rows, sql, phase, &rep.Instances)
		if err != nil {
			return nil, err
		}
		if why != "" {
			return stopped(why)
		}
	}
	rep.Exercises, rep.Current, rep.Passed = States(func(e Exercise) []check.Row { return rows[e.ID] })
	for i := range rep.Exercises {
		rep.Exercises[i].SQL = sql[rep.Exercises[i].ID]
		if rep.Exercises[i].SQL == nil {
			rep.Exercises[i].SQL = map[string][]Statement{}
		}
	}
	return finish()
}

// pass is the exercises checked on one pair of API instances: those that
// ask the database for one isolation level.
type pass struct {
	isolation string
	oneTry    bool
	exercises []Exercise
}

// passes groups the exercises ids names (nil: all) by the isolation level
// they ask for and whether learn's client may retry, in the ladder's
// order.
func passes(ids []string) []pass {
	var out []pass
	for _, e := range Ladder {
		if ids != nil && !slices.Contains(ids, e.ID) {
			continue
		}
		i := slices.IndexFunc(out, func(p pass) bool { return p.isolation == e.Isolation && p.oneTry == e.OneTry })
		if i < 0 {
			out = append(out, pass{isolation: e.Isolation, oneTry: e.OneTry})
			i = len(out) - 1
		}
		out[i].exercises = append(out[i].exercises, e)
	}
	return out
}

// runPass starts two API instances at p's isolation level and runs its
// exercises' checks, keeping each exercise's rows and statements. why is
// an instance that did not start.
func runPass(ctx context.Context, bin, connString string, p pass, opts Options, rows map[string][]check.Row, sql map[string]map[string][]Statement, phase func(string), said *[]string) (why string, err error) {
	var urls []string
	var insts []*Instance
	defer func() {
		for i, inst := range insts {
			ended := inst.Exited()
			inst.Stop()
			tail := strings.TrimSpace(inst.Stderr())
			if ended == "" && tail == "" {
				continue
			}
			line := fmt.Sprintf("api-%d", i+1)
			if p.isolation != "" {
				line += " (" + strings.ToUpper(p.isolation) + ")"
			}
			if ended != "" {
				line += " ended during the check (" + ended + ")"
			}
			if tail != "" {
				line += "; it wrote to standard error:\n" + tail
			}
			*said = append(*said, line)
		}
	}()
	log := &sqlLog{}
	phase("starting two API instances")
	if p.isolation != "" {
		phase("starting two API instances at " + strings.ToUpper(p.isolation))
	}
	for i := range 2 {
		inst, err := start(ctx, bin, fmt.Sprintf("api-%d", i+1), connString, startOptions{isolation: p.isolation, log: log})
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if err != nil {
			return err.Error(), nil
		}
		urls = append(urls, inst.URL)
		insts = append(insts, inst)
	}
	cfg, err := Config(urls)
	if err != nil {
		return "", err
	}
	of := map[string]string{} // check → its exercise in this pass
	var only []string
	for _, e := range p.exercises {
		for _, c := range e.Checks {
			of[c] = e.ID
			only = append(only, c)
		}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	done := func(row check.Row) {
		for _, inst := range insts {
			inst.sync(ctx)
		}
		id := of[row.Name]
		stmts := statementsOf(row, log.take())
		if p.isolation != "" {
			if s, level := otherLevel(stmts, p.isolation); level != "" {
				row.State, row.Failed = check.Error, nil
				row.Says = fmt.Sprintf("not checked at %s: your transaction chose %s (%s), and ran at it instead; begin it with db.Begin, at the database's level, and try the whole transaction again on a 40001",
					strings.ToUpper(p.isolation), strings.ToUpper(level), cutSQL(s.SQL))
			}
		}
		rows[id] = append(rows[id], row)
		if sql[id] == nil {
			sql[id] = map[string][]Statement{}
		}
		sql[id][row.Name] = stmts
		if opts.Done != nil {
			opts.Done(id, row)
		}
	}
	co := check.Options{Only: only, Harness: true, Done: done, Timeout: timeout}
	if p.oneTry {
		co.Backoff = []time.Duration{} // one try: the learner's code must retry what it can
	}
	phase("checking")
	if _, err := check.Run(ctx, cfg, co); err != nil {
		return "", err
	}
	return "", nil
}

// Config is learn check's example config with the base URLs urls: the
// harness answers in learn serve's shape.
func Config(urls []string) (*check.Config, error) {
	quoted := make([]string, len(urls))
	for i, u := range urls {
		quoted[i] = fmt.Sprintf("%q", u)
	}
	const example = `urls = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]`
	if !strings.Contains(check.Example, example) {
		return nil, errors.New("exercises: learn check's example config no longer holds its urls line")
	}
	return check.Parse([]byte(strings.Replace(check.Example, example, "urls = ["+strings.Join(quoted, ", ")+"]", 1)))
}

// States says each exercise's state from its check rows (rowsOf):
// passed when its checks pass and every earlier exercise has passed; the
// current exercise is the first that has not. An exercise none of whose
// checks ran is not run.
func States(rowsOf func(Exercise) []check.Row) (out []Status, current string, passed int) {
	earlier := true
	for _, e := range Ladder {
		st := Status{Exercise: e, Rows: []check.Row{}}
		ran, holds := 0, true
		for _, name := range e.Checks {
			for _, r := range rowsOf(e) {
				if r.Name == name {
					st.Rows = append(st.Rows, r)
					ran++
					holds = holds && r.State == check.Pass
				}
			}
		}
		switch {
		case ran == 0:
			st.State = Unrun
		case !holds:
			st.State = Failing
		case earlier:
			st.State = Passed
			passed++
		default:
			st.State = Waiting
		}
		if st.State != Passed && current == "" {
			current = e.ID
		}
		earlier = earlier && st.State == Passed
		out = append(out, st)
	}
	return out, current, passed
}

// statementsOf are the statements of row's requests among those sent
// while it ran: for each request id, those of its last sending (a race's
// rounds send the same ids again), in the order sent.
func statementsOf(row check.Row, sent []Statement) []Statement {
	last := map[string]int64{}
	for _, p := range row.Passages {
		last[p.RequestID] = 0
	}
	for _, s := range sent {
		if n, ok := last[s.Request]; ok && s.N > n {
			last[s.Request] = s.N
		}
	}
	out := []Statement{}
	for _, s := range sent {
		if n, ok := last[s.Request]; ok && s.N == n {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Statement) int { return a.At.Compare(b.At) })
	return out
}

// dropWithin bounds the drop of a run's schema, which goes on after the
// run's context ended (a Ctrl-C, the screen closed).
const dropWithin = 30 * time.Second

// dropSchema drops a run's schema, within dropWithin of the run's end.
func dropSchema(ctx context.Context, schema *pgtemp.Schema) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropWithin)
	defer cancel()
	_ = schema.Drop(dctx)
}

// levelClause is a statement's choice of an isolation level: BEGIN
// ISOLATION LEVEL …, or SET TRANSACTION ISOLATION LEVEL ….
var levelClause = regexp.MustCompile(`(?i)\bisolation\s+level\s+(read\s+committed|read\s+uncommitted|repeatable\s+read|serializable)\b`)

// otherLevel is the first of stmts that chose an isolation level other
// than level for its transaction, and the level it chose ("" when none
// did): an exercise run at REPEATABLE READ is no check of code that
// asks for READ COMMITTED.
func otherLevel(stmts []Statement, level string) (Statement, string) {
	for _, s := range stmts {
		if m := levelClause.FindStringSubmatch(s.SQL); m != nil {
			if chosen := strings.ToLower(strings.Join(strings.Fields(m[1]), " ")); chosen != level {
				return s, chosen
			}
		}
	}
	return Statement{}, ""
}

// cutSQL is a statement as a verdict quotes it: on one line, cut short.
func cutSQL(sql string) string { return "“" + cutLine(sql) + "”" }

// tablesWithin bounds schema.sql's run.
var tablesWithin = 30 * time.Second

// createTables runs dir's schema.sql on the database of connString. why
// is PostgreSQL's error with the file's name and line, for a schema.sql
// that does not run.
func createTables(ctx context.Context, dir, connString string) (why string, err error) {
	path := filepath.Join(dir, "schema.sql")
	sql, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("%s: %v: it holds the tables, and learn exercises init writes it", path, err), nil
	}
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	run, cancel := context.WithTimeout(ctx, tablesWithin)
	defer cancel()
	if _, err := conn.Exec(run, string(sql)); err != nil {
		if ctx.Err() == nil && run.Err() != nil {
			return fmt.Sprintf("%s did not finish within %s: it creates the tables, and nothing else should take long", path, tablesWithin), nil
		}
		if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
			// PostgreSQL counts the position in characters.
			runes := []rune(string(sql))
			line := 1 + strings.Count(string(runes[:min(max(int(pe.Position)-1, 0), len(runes))]), "\n")
			if pe.Position == 0 {
				return fmt.Sprintf("%s: %s (SQLSTATE %s)", path, pe.Message, pe.Code), nil
			}
			return fmt.Sprintf("%s:%d: %s (SQLSTATE %s)", path, line, pe.Message, pe.Code), nil
		}
		return "", err
	}
	return "", nil
}
