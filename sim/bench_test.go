package sim

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/pgtemp"
)

// benchSeats is the seat count of the benchmark's one event: enough that it
// never sells out, so every new intent books.
const benchSeats = 2_000_000_000

// pgbenchSeconds is how long each pgbench baseline runs (-T).
const pgbenchSeconds = 2

// BenchmarkBookTicket measures Engine.BookTicket (the engine, not HTTP, and
// no trace) on its own fresh stage, against the same transaction run by
// pgbench on the same server in the same run:
//
//   - distinct/clients=C: C goroutines share b.N new intents (quantity 1, a
//     fresh idempotency key each, one user per goroutine). Reports
//     bookings/s, pgbench-tps for the new-booking transaction at C clients,
//     and ratio = bookings/s ÷ pgbench-tps.
//   - copies/n=N: b.N rounds; in each, N goroutines send the same request
//     (same user, same key) at once, so one creates the booking and N-1 are
//     replays. Reports requests/s, pgbench-tps for the same mix at N clients
//     (the new-booking script with weight 1, the replay script with weight
//     N-1), and ratio = requests/s ÷ pgbench-tps.
//
// All intents book one event, so every transaction waits for its row lock:
// the numbers are the throughput of one contended event, as in the lesson.
// pgbench runs once per sub-benchmark and -count, before the timer starts.
// Without pgbench the benchmark is skipped.
func BenchmarkBookTicket(b *testing.B) {
	bin, err := findPgbench()
	if err != nil {
		b.Skip(err)
	}
	for _, clients := range []int{1, 8, 32} {
		var base baseline
		b.Run(fmt.Sprintf("distinct/clients=%d", clients), func(b *testing.B) {
			tps := base.tps(b, func() float64 { return pgbenchDistinct(b, bin, clients) })
			benchDistinct(b, clients, tps)
		})
	}
	for _, n := range []int{10, 32} {
		var base baseline
		b.Run(fmt.Sprintf("copies/n=%d", n), func(b *testing.B) {
			tps := base.tps(b, func() float64 { return pgbenchCopies(b, bin, n) })
			benchCopies(b, n, tps)
		})
	}
}

// baseline is a pgbench result kept for the calls of one sub-benchmark.
// The testing package calls a benchmark function with growing b.N on one
// *testing.B, and gives each -count and -cpu run a new one: measuring once
// per *testing.B keeps pgbench out of every b.N round but pairs each
// reported row with a baseline of its own.
type baseline struct {
	b   *testing.B
	val float64
}

// tps returns the baseline measured for b, measuring it first if b is new.
// Calls come one after another, never at once.
func (p *baseline) tps(b *testing.B, measure func() float64) float64 {
	if p.b != b {
		p.val, p.b = measure(), b
	}
	return p.val
}

// benchStage returns a fresh stage with one event that never sells out, and
// the engine of its only API instance. The caller closes the stage with
// closeBenchStage when its b.N round ends: b.Cleanup would keep every
// round's pool open until the last round.
func benchStage(b *testing.B, clients int) (*Stage, *Engine, int64) {
	b.Helper()
	ctx := b.Context()
	st, err := NewStage(ctx, testDatabase(), StageConfig{MaxConns: clients + 2})
	if err != nil {
		b.Fatal(err)
	}
	id, err := st.AddEvent(ctx, "Benchmark night", benchSeats, st.Clock.Now().Add(365*24*time.Hour))
	if err != nil {
		closeBenchStage(b, st)
		b.Fatal(err)
	}
	return st, st.Instances[0].API.Engine, id
}

func closeBenchStage(b *testing.B, st *Stage) {
	b.StopTimer()
	if err := st.Close(); err != nil {
		b.Errorf("close stage: %v", err)
	}
}

func benchDistinct(b *testing.B, clients int, pgbenchTPS float64) {
	st, eng, eventID := benchStage(b, clients)
	defer closeBenchStage(b, st)
	ctx := b.Context()

	// book runs n new intents on clients goroutines, each goroutine its own user.
	book := func(n int64) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				req := BookingRequest{UserID: "c" + strconv.Itoa(c), EventID: eventID, Quantity: 1}
				for next.Add(1) <= n {
					req.Key = uuid.New()
					res, err := eng.BookTicket(ctx, req)
					if err != nil {
						b.Errorf("book %+v: %v", req, err)
						return
					}
					if res.Replayed {
						b.Errorf("a new key %s was answered as a replay of %s", req.Key, res.Booking.PublicID())
						return
					}
				}
			})
		}
		wg.Wait()
	}
	// Warm up: open the pool's connections and fill their statement caches,
	// as pgbench connects (and is timed) without initial connection time.
	warm := int64(4 * clients)
	book(warm)
	if b.Failed() {
		b.FailNow()
	}

	b.ResetTimer()
	book(int64(b.N))
	b.StopTimer()

	checkBenchRows(b, st, eventID, warm+int64(b.N))
	ours := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(ours, "bookings/s")
	b.ReportMetric(pgbenchTPS, "pgbench-tps")
	b.ReportMetric(ours/pgbenchTPS, "ratio")
}

func benchCopies(b *testing.B, n int, pgbenchTPS float64) {
	st, eng, eventID := benchStage(b, n)
	defer closeBenchStage(b, st)
	ctx := b.Context()

	// round sends n copies of one new intent at once and checks that exactly
	// one created the booking and the others replayed it.
	round := func() {
		req := BookingRequest{UserID: "copy", EventID: eventID, Quantity: 1, Key: uuid.New()}
		start := make(chan struct{})
		var created atomic.Int32
		ids := make([]int64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				res, err := eng.BookTicket(ctx, req)
				if err != nil {
					b.Errorf("copy %d of %s: %v", i, req.Key, err)
					return
				}
				if !res.Replayed {
					created.Add(1)
				}
				ids[i] = res.Booking.ID
			})
		}
		close(start)
		wg.Wait()
		if b.Failed() {
			return
		}
		if created.Load() != 1 || slices.ContainsFunc(ids, func(id int64) bool { return id != ids[0] }) {
			b.Errorf("%d copies of key %s: %d created a booking, ids %v; want 1 creation and %d replays of it",
				n, req.Key, created.Load(), ids, n-1)
		}
	}
	const warm = 4
	for range warm {
		round()
	}
	if b.Failed() {
		b.FailNow()
	}

	b.ResetTimer()
	for range b.N {
		round()
	}
	b.StopTimer()

	checkBenchRows(b, st, eventID, warm+int64(b.N))
	ours := float64(n*b.N) / b.Elapsed().Seconds()
	b.ReportMetric(ours, "requests/s")
	b.ReportMetric(pgbenchTPS, "pgbench-tps")
	b.ReportMetric(ours/pgbenchTPS, "ratio")
}

// checkBenchRows checks, outside the timer, that the stage holds exactly
// want bookings and that the event lost exactly that many seats.
func checkBenchRows(b *testing.B, st *Stage, eventID, want int64) {
	b.Helper()
	var rows, left int64
	err := st.Admin.QueryRow(b.Context(), `SELECT (SELECT count(*) FROM bookings), (SELECT seats_left FROM events WHERE id = $1)`,
		eventID).Scan(&rows, &left)
	if err != nil {
		b.Fatal(err)
	}
	if rows != want || left != benchSeats-want {
		b.Fatalf("%d bookings and %d seats left; want %d bookings and %d seats left", rows, left, want, benchSeats-want)
	}
}

// The pgbench scripts, made from the engine's own statements so that the
// baseline sends what BookTicket sends, round trip for round trip. A
// variable's value is sent as a parameter (-M prepared, as pgx prepares and
// caches each statement); the key of a new intent is made on the server from
// a random number, since pgbench variables hold no UUIDs.
var (
	pgbenchNew = strings.Join([]string{
		`\set k random(1, 9223372036854775806)`,
		`BEGIN;`,
		pgbenchSQL(sqlLockEvent, ":event"),
		pgbenchSQL(sqlFindByKey, "('c' || :client_id::text)", "md5(:k::text)::uuid"),
		pgbenchSQL(sqlTakeSeats, ":event", "1"),
		pgbenchSQL(sqlInsertBooks, "('c' || :client_id::text)", ":event", "1", "md5(:k::text)::uuid", "now()"),
		`COMMIT;`,
	}, "\n") + "\n"
	pgbenchReplay = strings.Join([]string{
		`BEGIN;`,
		pgbenchSQL(sqlLockEvent, ":event"),
		pgbenchSQL(sqlFindByKey, ":user", ":key"),
		`COMMIT;`,
	}, "\n") + "\n"
)

// pgbenchSQL replaces the parameters $1, $2… of sql with args, in order.
func pgbenchSQL(sql string, args ...string) string {
	for i := len(args); i >= 1; i-- { // $1 after $10
		sql = strings.ReplaceAll(sql, "$"+strconv.Itoa(i), args[i-1])
	}
	return sql + ";"
}

// pgbenchDistinct returns pgbench's tps for the new-booking transaction at
// clients clients, each new transaction with a fresh key.
func pgbenchDistinct(b *testing.B, bin string, clients int) float64 {
	sc, eventID := pgbenchSchema(b)
	return runPgbench(b, bin, sc, clients, []string{"-D", fmt.Sprintf("event=%d", eventID)},
		map[string]string{"new.pgbench": pgbenchNew}, "new.pgbench")
}

// pgbenchCopies returns pgbench's tps for n clients sending the mix of a
// round of copies: one new booking to n-1 replays of a committed booking.
func pgbenchCopies(b *testing.B, bin string, n int) float64 {
	sc, eventID := pgbenchSchema(b)
	ctx := b.Context()
	conn, err := pgx.Connect(ctx, sc.ConnString())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	key := uuid.New()
	if _, err := conn.Exec(ctx, sqlInsertBooks, "copy", eventID, 1, key, time.Now()); err != nil {
		b.Fatal(err)
	}
	vars := []string{"-D", fmt.Sprintf("event=%d", eventID), "-D", "user=copy", "-D", "key=" + key.String()}
	return runPgbench(b, bin, sc, n, vars,
		map[string]string{"new.pgbench": pgbenchNew, "replay.pgbench": pgbenchReplay},
		"new.pgbench@1", fmt.Sprintf("replay.pgbench@%d", n-1))
}

// pgbenchSchema makes a fresh schema, dropped when b ends, with the booking
// tables and one event like the stage's, and returns it and the event's id.
func pgbenchSchema(b *testing.B) (*pgtemp.Schema, int64) {
	b.Helper()
	ctx := b.Context()
	sc, err := testDB.NewSchema(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := sc.Drop(context.Background()); err != nil {
			b.Error(err)
		}
	})
	conn, err := pgx.Connect(ctx, sc.ConnString())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := CreateSchema(ctx, conn, UniquePerUser); err != nil {
		b.Fatal(err)
	}
	var id int64
	err = conn.QueryRow(ctx, `INSERT INTO events (name, seats_left, starts_at) VALUES ($1, $2, $3) RETURNING id`,
		"Benchmark night", benchSeats, time.Now().Add(365*24*time.Hour)).Scan(&id)
	if err != nil {
		b.Fatal(err)
	}
	return sc, id
}

// pgbenchTPSLine is pgbench's result line (PostgreSQL 14 and later).
var pgbenchTPSLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)

// runPgbench runs pgbench for pgbenchSeconds in schema sc with clients
// clients, the scripts (name → text) written to a temporary directory and
// run as the -f arguments files ("name@weight"), and returns its tps
// without initial connection time. It connects as the test server's user,
// over the same socket or address, with search_path set to sc.
func runPgbench(b *testing.B, bin string, sc *pgtemp.Schema, clients int, vars []string, scripts map[string]string, files ...string) float64 {
	b.Helper()
	dir := b.TempDir()
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := pgx.ParseConfig(testDB.ConnString())
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"-n", "-M", "prepared", "-T", strconv.Itoa(pgbenchSeconds),
		"-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(clients, runtime.NumCPU()))}
	args = append(args, vars...)
	for _, f := range files {
		args = append(args, "-f", filepath.Join(dir, f))
	}
	cmd := exec.CommandContext(b.Context(), bin, args...)
	// The server's address and user come from the environment, not from
	// the person's PG* variables; search_path picks the fresh schema.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=")
	})
	env = append(env, "LC_ALL=C",
		"PGHOST="+cfg.Host, "PGPORT="+strconv.Itoa(int(cfg.Port)),
		"PGUSER="+cfg.User, "PGDATABASE="+cfg.Database,
		"PGOPTIONS=-c search_path="+sc.Name())
	if cfg.Password != "" {
		env = append(env, "PGPASSWORD="+cfg.Password)
	}
	if cfg.TLSConfig == nil {
		env = append(env, "PGSSLMODE=disable")
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out.Bytes())
	}
	m := pgbenchTPSLine.FindSubmatch(out.Bytes())
	if m == nil {
		b.Fatalf("%s %s printed no \"tps = … (without initial connection time)\" line:\n%s", bin, strings.Join(args, " "), out.Bytes())
	}
	tps, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil || tps <= 0 {
		b.Fatalf("pgbench reported tps %q: %v\n%s", m[1], err, out.Bytes())
	}
	return tps
}

// findPgbench returns the path of pgbench: on PATH, in pg_config --bindir,
// or in the newest /usr/lib/postgresql/*/bin.
func findPgbench() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "pgbench")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	major := func(p string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
		return n
	}
	slices.SortFunc(found, func(x, y string) int { return major(y) - major(x) })
	if len(found) > 0 {
		return found[0], nil
	}
	return "", fmt.Errorf("pgbench not found (on PATH, in pg_config --bindir or /usr/lib/postgresql/*/bin): " +
		"BenchmarkBookTicket needs it for its baseline; install PostgreSQL's client programs (e.g. apt-get install postgresql-client)")
}
