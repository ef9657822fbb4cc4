//go:build linux

package pgtemp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/internal/pgfault"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/pgsql"
)

func schemaExists(t testing.TB, s *Server, name string) bool {
	t.Helper()
	conn := connect(t, s.ConnString())
	return queryString(t, conn, "SELECT count(*)::text FROM pg_namespace WHERE nspname = $1", name) == "1"
}

func newSchemaT(t testing.TB, s *Server) *Schema {
	t.Helper()
	sc, err := s.NewSchema(context.Background())
	if err != nil {
		t.Fatalf("NewSchema: %v", err)
	}
	t.Cleanup(func() { sc.Drop(context.Background()) })
	return sc
}

func TestSchemasAreIsolated(t *testing.T) {
	s := needShared(t)
	a, b := newSchemaT(t, s), newSchemaT(t, s)
	if a.Name() == b.Name() || !strings.HasPrefix(a.Name(), "learn_") || len(a.Name()) != len("learn_")+16 {
		t.Fatalf("schema names %q and %q", a.Name(), b.Name())
	}
	ctx := context.Background()
	ca, cb := connect(t, a.ConnString()), connect(t, b.ConnString())
	if got := queryString(t, ca, "SELECT current_schema()::text"); got != a.Name() {
		t.Errorf("current_schema through a.ConnString() = %s, want %s", got, a.Name())
	}
	if _, err := ca.Exec(ctx, "CREATE TABLE bookings (id int PRIMARY KEY); INSERT INTO bookings VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, ca, "SELECT to_regclass('bookings')::text"); got != "bookings" {
		t.Errorf("table not visible in its own schema: %s", got)
	}
	if got := queryString(t, cb, "SELECT coalesce(to_regclass('bookings')::text, 'none')"); got != "none" {
		t.Errorf("table made in %s is visible in %s as %s", a.Name(), b.Name(), got)
	}
	if got := queryString(t, cb, "SELECT count(*)::text FROM pg_tables WHERE tablename = 'bookings' AND schemaname = $1", a.Name()); got != "1" {
		t.Errorf("table did not land in schema %s", a.Name())
	}
	ca.Close(ctx)

	if err := a.Drop(ctx); err != nil {
		t.Fatalf("Drop: %v", err)
	}
	if schemaExists(t, s, a.Name()) {
		t.Errorf("schema %s exists after Drop", a.Name())
	}
	if err := a.Drop(ctx); err != nil {
		t.Errorf("second Drop: %v", err)
	}
	if !schemaExists(t, s, b.Name()) {
		t.Errorf("dropping %s removed %s too", a.Name(), b.Name())
	}
}

// TestCloseDropsSchemas uses a URL-mode server on the shared one, since a
// local cluster's schemas go with the cluster.
func TestCloseDropsSchemas(t *testing.T) {
	base := needShared(t)
	s := startT(t, Options{Mode: URL, DatabaseURL: base.ConnString()})
	ctx := context.Background()
	kept, err := s.NewSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dropped, err := s.NewSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := dropped.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if !schemaExists(t, base, kept.Name()) {
		t.Fatalf("schema %s missing before Close", kept.Name())
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if schemaExists(t, base, kept.Name()) {
		t.Errorf("Close left schema %s", kept.Name())
	}
	if err := kept.Drop(ctx); err != nil {
		t.Errorf("Drop after Close: %v", err)
	}
	if _, err := s.NewSchema(ctx); err == nil {
		t.Errorf("NewSchema after Close succeeded")
	}
}

// A schema whose CREATE the server carried out, but whose answer did not
// come back before the caller's context ended (a run stopped at once by a
// fast restart on the play screen), is dropped all the same: NewSchema
// returns ctx's error and, after Close, nothing of the schema is left in
// the database.
func TestNewSchemaCancelledAfterTheServerMadeItLeavesNothing(t *testing.T) {
	base := needShared(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	proxy := pgfault.Start(t, base.ConnString(), pgfault.Rule{Match: "CREATE SCHEMA", Action: pgfault.CancelAfterAnswer, Cancel: cancel})
	url, err := proxy.ConnString(base.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	s := startT(t, Options{Mode: URL, DatabaseURL: url})
	before := schemasOfThisProcess(t, base)
	if _, err := s.NewSchema(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("NewSchema = %v, want the context's error", err)
	}
	if !proxy.Fired() {
		t.Fatal("the CREATE SCHEMA never came: the test broke nothing")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if after := schemasOfThisProcess(t, base); !slices.Equal(after, before) {
		t.Errorf("schemas of this process: %v before, %v after Close", before, after)
	}
}

// schemasOfThisProcess lists, sorted, the learn_* schemas in s's database
// whose owner record names this process.
func schemasOfThisProcess(t *testing.T, s *Server) []string {
	t.Helper()
	rows, err := connect(t, s.ConnString()).Query(context.Background(),
		`SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'learn\_%' AND obj_description(oid, 'pg_namespace') LIKE $1 ORDER BY 1`,
		fmt.Sprintf(`%%"pid":%d,%%`, os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestSearchPathInURLForm(t *testing.T) {
	needLocal(t)
	s := needShared(t)
	if !s.inst.Disposable {
		t.Skip("the shared server is not local")
	}
	u := "postgres:///postgres?host=" + clusterOf(s).Dir() + "&user=learn&sslmode=disable"
	us := startT(t, Options{Mode: URL, DatabaseURL: u})
	sc := newSchemaT(t, us)
	conn := connect(t, sc.ConnString())
	if got := queryString(t, conn, "SELECT current_schema()::text"); got != sc.Name() {
		t.Errorf("current_schema through %s = %s, want %s", sc.ConnString(), got, sc.Name())
	}
}

func TestWithSearchPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"host=/tmp/x port=5432 user=learn", "host=/tmp/x port=5432 user=learn search_path=learn_1"},
		{"postgres://u:p@h:5432/db", "postgres://u:p@h:5432/db?search_path=learn_1"},
		{"postgres://u@h/db?sslmode=disable", "postgres://u@h/db?sslmode=disable&search_path=learn_1"},
		{"postgresql://u@h1:5432,h2:5433/db", "postgresql://u@h1:5432,h2:5433/db?search_path=learn_1"},
		{"postgres://u@h/db?search_path=public", "postgres://u@h/db?search_path=learn_1"},
	}
	for _, tt := range tests {
		if got := withSearchPath(tt.in, "learn_1"); got != tt.want {
			t.Errorf("withSearchPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// schemaHelperEnv makes the test binary a stand-in for learn in URL mode: it
// makes a schema in the database the variable names, keeps a connection in
// it as the booking engine does, prints its name and waits to be killed.
const schemaHelperEnv = "LEARN_PGTEMP_SCHEMA_HELPER_URL"

func schemaHelper(url string) int {
	ctx := context.Background()
	s, err := Start(ctx, Options{Mode: URL, DatabaseURL: url})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	sc, err := s.NewSchema(ctx)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	conn, err := pgx.Connect(ctx, sc.ConnString())
	if err == nil {
		_, err = conn.Exec(ctx, "CREATE TABLE bookings (id int PRIMARY KEY)")
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("schema:", sc.Name())
	select {}
}

// startSchemaHelper starts a stand-in for learn in URL mode (schemaHelper)
// and returns it with the name of its schema. The test's cleanup kills it
// and drops the schema, if the test did not.
func startSchemaHelper(t *testing.T, s *Server) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), schemaHelperEnv+"="+s.ConnString())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var name string
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if name != "" {
			connect(t, s.ConnString()).Exec(context.Background(), pgsql.DropSchemaSQL(name))
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "schema: ") {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	name = strings.TrimSpace(strings.TrimPrefix(line, "schema: "))
	return cmd, name
}

// killSchemaHelper kills a helper outright, as SIGKILL or the OOM killer
// would end learn: it drops nothing.
func killSchemaHelper(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Kill()
	cmd.Wait()
}

// schemaComment returns the comment on a schema ("<null>" when it has none).
func schemaComment(t *testing.T, s *Server, name string) string {
	t.Helper()
	return queryString(t, connect(t, s.ConnString()),
		"SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1", name)
}

// TestURLStartReapsSchemaOfKilledLearn is the user's report: learn in URL
// mode was SIGKILLed and its schema stayed in their database. The next Start
// in URL mode drops it and says so.
func TestURLStartReapsSchemaOfKilledLearn(t *testing.T) {
	base := needShared(t)
	cmd, name := startSchemaHelper(t, base)
	o, ok := owner.ParseSchema(schemaComment(t, base, name))
	if !ok || o.PID != cmd.Process.Pid || o.Ticks != owner.StartTicks(o.PID) || o.BootID != owner.BootID() {
		t.Fatalf("owner record of the helper's schema: %+v (%v), helper pid %d", o, ok, cmd.Process.Pid)
	}
	killSchemaHelper(t, cmd)
	if !schemaExists(t, base, name) {
		t.Fatalf("the killed helper's schema %s is already gone: nothing to reap", name)
	}

	var mu sync.Mutex
	var logs []string
	logf := func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		mu.Unlock()
		t.Logf(format, args...)
	}
	s := startT(t, Options{Mode: URL, DatabaseURL: base.ConnString(), Logf: logf})
	if schemaExists(t, base, name) {
		t.Errorf("after the next Start in URL mode the orphan %s still exists", name)
	}
	want := "removed an orphaned schema " + name + " from the PostgreSQL at "
	mu.Lock()
	if !strings.Contains(strings.Join(logs, "\n"), want) || !strings.Contains(strings.Join(logs, "\n"), fmt.Sprintf("learn pid %d is gone", o.PID)) {
		t.Errorf("Start's log lacks %q and the pid:\n%s", want, strings.Join(logs, "\n"))
	}
	mu.Unlock()
	newSchemaT(t, s)
}

// TestReapSchemasDropsOnlyOrphansOfThisMachine: ReapSchemas drops the schema
// of a learn that was killed, and one whose owner record names a dead pid of
// this machine; it leaves alone the schema of a live learn (another process,
// and this one), a learn_* schema without learn's comment or with another
// comment, and those whose owner ran on another host, in another boot or in
// another pid namespace, or whose pid now belongs to another process. Every
// schema named as learn names them is in the report: dropped, in use, or
// left with the reason and the statement that drops it (the doctor must
// never say there are none while there are some).
func TestReapSchemasDropsOnlyOrphansOfThisMachine(t *testing.T) {
	base := needShared(t)
	ctx := context.Background()
	conn := connect(t, base.ConnString())
	live, liveName := startSchemaHelper(t, base)
	killed, killedName := startSchemaHelper(t, base)
	killSchemaHelper(t, killed)
	own := newSchemaT(t, base)

	dead := deadPID(t)
	me := owner.ThisSchema()
	owned := func(f func(*owner.Schema)) string {
		o := me
		o.PID, o.Ticks = dead, "1"
		f(&o)
		return o.Comment()
	}
	const (
		dropped = "dropped"
		inUse   = "in use"
		left    = "left"
		absent  = "not in the report"
	)
	fakes := []struct {
		what, name, comment string
		want                string
		why                 string // in the reason, for a schema left
	}{
		{"a dead pid of this machine", "", owned(func(*owner.Schema) {}), dropped, ""},
		{"a dead pid recorded without start ticks", "", owned(func(o *owner.Schema) { o.Ticks = "" }), dropped, ""},
		{"our pid with another start time (pid reused)", "", owned(func(o *owner.Schema) { o.PID = os.Getpid() }), dropped, ""},
		{"no comment", "", "", left, "no owner record"},
		{"a comment of someone else's", "", "our team's scratch schema", left, "no owner record"},
		{"a comment that is not learn's JSON", "", owner.SchemaPrefix + "{not json", left, "no owner record"},
		{"another host", "", owned(func(o *owner.Schema) { o.Host = "build-box-7" }), left, "on host build-box-7"},
		{"another boot", "", owned(func(o *owner.Schema) { o.BootID = "not-this-boot" }), left, "restarted"},
		{"no boot id", "", owned(func(o *owner.Schema) { o.BootID = "" }), left, "no boot id"},
		{"another pid namespace", "", owned(func(o *owner.Schema) { o.PIDNS = "pid:[1]" }), left, "pid namespace"},
		{"a live pid (the helper)", "", owned(func(o *owner.Schema) { o.PID, o.Ticks = live.Process.Pid, owner.StartTicks(live.Process.Pid) }), inUse, ""},
		{"a name NewSchema never gives", "learn_scratch", owned(func(*owner.Schema) {}), absent, ""},
	}
	for i := range fakes {
		f := &fakes[i]
		if f.name == "" {
			f.name = fmt.Sprintf("learn_%016x", rand.Uint64())
		}
		sql := "CREATE SCHEMA " + f.name
		if f.comment != "" {
			sql += "; COMMENT ON SCHEMA " + f.name + " IS " + pgsql.QuoteLiteral(f.comment)
		}
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Exec(context.Background(), pgsql.DropSchemaSQL(f.name)) })
	}

	rep, err := ReapSchemas(ctx, base.ConnString(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	// Another test binary sharing LEARN_TEST_DATABASE may have had orphans
	// too, so look only at this test's schemas.
	place := func(name string) (string, LeftSchema) {
		for _, l := range rep.Left {
			if l.Name == name {
				return left, l
			}
		}
		switch {
		case slices.Contains(rep.Dropped, name):
			return dropped, LeftSchema{}
		case slices.Contains(rep.InUse, name):
			return inUse, LeftSchema{}
		}
		return absent, LeftSchema{}
	}
	check := func(what, name, want, why string) {
		t.Helper()
		got, l := place(name)
		if got != want || schemaExists(t, base, name) == (want == dropped) {
			t.Errorf("%s: %s, exists %v; want %s", what, got, schemaExists(t, base, name), want)
		}
		if got == left && (!strings.Contains(l.Why, why) || l.Drop() != "DROP SCHEMA "+name+" CASCADE" || !strings.Contains(l.String(), l.Drop())) {
			t.Errorf("%s: left with %q, want the reason to say %q and the statement that drops it", what, l, why)
		}
	}
	check("the schema of a killed learn", killedName, dropped, "")
	check("the schema of a live learn", liveName, inUse, "")
	check("this process's schema", own.Name(), inUse, "")
	for _, f := range fakes {
		check(f.what, f.name, f.want, f.why)
	}
	if again, err := ReapSchemas(ctx, base.ConnString(), t.Logf); err != nil || slices.ContainsFunc(again.Dropped, func(n string) bool {
		return n == killedName || strings.HasPrefix(n, "learn_scratch")
	}) {
		t.Errorf("a second ReapSchemas: %+v, %v", again, err)
	}
}

// TestReapSchemasListsOrphansItMayNotDrop: the schema of a killed learn that
// belongs to another database role, which the user learn connects as may
// not drop, is left and listed with the reason, never passed over silently.
func TestReapSchemasListsOrphansItMayNotDrop(t *testing.T) {
	base := needShared(t)
	if base.Mode() != Local {
		t.Skip("needs a cluster where the test may create roles and log in as them")
	}
	ctx := context.Background()
	conn := connect(t, base.ConnString())
	role := fmt.Sprintf("learn_test_role_%x", rand.Uint32())
	o := owner.ThisSchema()
	o.PID, o.Ticks = deadPID(t), "1"
	name := fmt.Sprintf("learn_%016x", rand.Uint64())
	if _, err := conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN; CREATE SCHEMA "+name+"; COMMENT ON SCHEMA "+name+" IS "+pgsql.QuoteLiteral(o.Comment())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(context.Background(), pgsql.DropSchemaSQL(name)+"; DROP ROLE IF EXISTS "+role) })

	rep, err := ReapSchemas(ctx, base.ConnString()+" user="+role, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rep.Left, func(l LeftSchema) bool { return l.Name == name })
	if i < 0 || !strings.Contains(rep.Left[i].Why, "is gone") || !strings.Contains(rep.Left[i].Why, role+" may not drop") {
		t.Errorf("the orphan of another role: %+v, want it left with why", rep)
	}
	if !schemaExists(t, base, name) {
		t.Errorf("the schema was dropped")
	}
}

// TestReapAllReachesTheURLOnlyWhenLearnWouldUseIt: ReapAll drops the schemas
// of killed learns in the database of opts.DatabaseURL in Auto and URL mode,
// never connects to it with Local or Docker forced, and a missing Docker
// daemon is no error.
func TestReapAllReachesTheURLOnlyWhenLearnWouldUseIt(t *testing.T) {
	base := needShared(t)
	noDaemon(t)
	ctx := context.Background()
	for _, tt := range []struct {
		mode Mode
		drop bool
	}{{Local, false}, {Docker, false}, {Auto, true}, {URL, true}} {
		cmd, name := startSchemaHelper(t, base)
		killSchemaHelper(t, cmd)
		var lines []string
		err := ReapAll(ctx, Options{Mode: tt.mode, DatabaseURL: base.ConnString()}, func(format string, args ...any) {
			lines = append(lines, fmt.Sprintf(format, args...))
		})
		if err != nil {
			t.Errorf("%s: %v", tt.mode, err)
		}
		if gone := !schemaExists(t, base, name); gone != tt.drop {
			t.Errorf("%s: the killed learn's schema dropped: %v, want %v (%q)", tt.mode, gone, tt.drop, lines)
		}
		connect(t, base.ConnString()).Exec(ctx, pgsql.DropSchemaSQL(name))
	}
	if err := ReapAll(ctx, Options{Mode: URL, DatabaseURL: "postgres://learn:hunter22@127.0.0.1:1/nowhere"}, nil); err == nil ||
		!strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "hunter22") {
		t.Errorf("ReapAll with an unreachable URL: %v", err)
	}
}

// TestQuoteLiteral: what quoteLiteral quotes comes back unchanged from the
// server, whatever standard_conforming_strings says.
func TestQuoteLiteral(t *testing.T) {
	s := needShared(t)
	conn := connect(t, s.ConnString())
	for _, scs := range []string{"on", "off"} {
		if _, err := conn.Exec(context.Background(), "SET standard_conforming_strings = "+scs); err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"", "plain", "it's", `back\slash`, `\'; DROP TABLE x; --`, "line\nbreak", "ünïcode"} {
			if got := queryString(t, conn, "SELECT "+pgsql.QuoteLiteral(v)); got != v {
				t.Errorf("standard_conforming_strings=%s: %q came back as %q", scs, v, got)
			}
		}
	}
}

// A Drop never waits on a session that holds a lock in the schema: one
// whose client was killed while its statement runs on (pg_sleep holding
// a table's lock), and one left idle in a transaction, are ended, and the
// schema goes; a session elsewhere is left alone.
func TestDropEndsTheSessionsThatHoldItsLocks(t *testing.T) {
	s := needShared(t)
	sc := newSchemaT(t, s)
	ctx := t.Context()
	setup := connect(t, sc.ConnString())
	if _, err := setup.Exec(ctx, "CREATE TABLE events (id int); CREATE TABLE bookings (id int)"); err != nil {
		t.Fatal(err)
	}
	sleeper, idle, other := connect(t, sc.ConnString()), connect(t, sc.ConnString()), connect(t, s.ConnString())
	if _, err := idle.Exec(ctx, "BEGIN; LOCK TABLE bookings IN ACCESS SHARE MODE"); err != nil {
		t.Fatal(err)
	}
	slept := make(chan error, 1)
	go func() {
		_, err := sleeper.Exec(context.WithoutCancel(ctx), "LOCK TABLE events IN ACCESS SHARE MODE; SELECT pg_sleep(600)")
		slept <- err
	}()
	// The sleeper holds its lock once PostgreSQL says it sleeps.
	for queryString(t, setup, "SELECT count(*)::text FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND pid = $1", int(sleeper.PgConn().PID())) != "1" {
	}
	setup.Close(ctx)
	if err := sc.Drop(ctx); err != nil {
		t.Fatalf("Drop: %v", err)
	}
	if schemaExists(t, s, sc.Name()) {
		t.Errorf("schema %s exists after Drop", sc.Name())
	}
	if err := <-slept; err == nil {
		t.Errorf("the sleeping session ran on after the Drop")
	}
	if got := queryString(t, other, "SELECT 'alive'"); got != "alive" {
		t.Errorf("a session outside the schema: %q", got)
	}
}
