package engine

// BenchmarkBookTicket's baseline: pgbench running the engine's own
// transaction.

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
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/pgtemp"
)

// The pgbench scripts, made from the lesson's plan as the pipelined
// executor sends it (Plan.rounds), so that the baseline sends what
// BookTicket sends, round trip for round trip: a pipeline
// (\startpipeline … \endpipeline) is one round trip ended by one Sync, as
// the engine's pgconn batch is. A variable's value is sent as a parameter
// (-M prepared, as the engine prepares each statement once per
// connection); the key of a new intent is made on the server from a
// random number, since pgbench variables hold no UUIDs.
var (
	pgbenchNew = pgbenchScript(PlanFor(Design{}).rounds(), map[Op][]string{
		OpLockEvent: {":event"},
		OpFindKey:   {"('c' || :client_id::text)", "md5(:k::text)::uuid"},
		OpTakeSeats: {":event", "1"},
		OpInsert:    {"('c' || :client_id::text)", ":event", "1", "md5(:k::text)::uuid", "now()"},
	}, `\set k random(1, 9223372036854775806)`)
	// A replay: the first round trip, which finds the key, then COMMIT.
	pgbenchReplay = pgbenchScript(PlanFor(Design{}).rounds()[:1], map[Op][]string{
		OpLockEvent: {":event"},
		OpFindKey:   {":user", ":key"},
	}, "") + "COMMIT;\n"
)

// pgbenchScript writes rounds as pgbench pipelines, each statement with
// its parameters replaced by args[op] (checks send nothing): BEGIN in the
// first, COMMIT in the last when it writes. head, if any, is the first
// line.
func pgbenchScript(rounds [][]Op, args map[Op][]string, head string) string {
	var lines []string
	if head != "" {
		lines = append(lines, head)
	}
	for i, round := range rounds {
		lines = append(lines, `\startpipeline`)
		if i == 0 {
			lines = append(lines, sqlBegin+";")
		}
		for _, op := range round {
			if sql := op.statement(); sql != "" {
				lines = append(lines, pgbenchSQL(sql, args[op]...))
			}
		}
		if i == len(rounds)-1 && !decidesAny(round) {
			lines = append(lines, "COMMIT;")
		}
		lines = append(lines, `\endpipeline`)
	}
	return strings.Join(lines, "\n") + "\n"
}

// pgbenchSQL replaces the parameters $1, $2… of sql with args, in order.
func pgbenchSQL(sql string, args ...string) string {
	for i := len(args); i >= 1; i-- { // $1 after $10
		sql = strings.ReplaceAll(sql, "$"+strconv.Itoa(i), args[i-1])
	}
	return sql + ";"
}

// pgbenchDistinct returns pgbench's tps for the new-booking transaction at
// clients clients in schema sc, each new transaction with a fresh key.
func pgbenchDistinct(b *testing.B, bin string, sc *pgtemp.Schema, eventID int64, clients int, limit string) pgbenchRun {
	return runPgbench(b, bin, sc, clients, limit, []string{"-D", fmt.Sprintf("event=%d", eventID)},
		map[string]string{"new.pgbench": pgbenchNew}, "new.pgbench")
}

// pgbenchCopies returns pgbench's tps for n clients sending the mix of a
// round of copies: one new booking to n-1 replays of a committed booking
// (made on the first call).
func pgbenchCopies(b *testing.B, bin string, sc *pgtemp.Schema, eventID int64, n int, limit string) pgbenchRun {
	key := uuid.NewSHA1(uuid.NameSpaceOID, []byte(sc.Name())) // the same for every round
	ctx := b.Context()
	conn, err := pgx.Connect(ctx, sc.ConnString())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `INSERT INTO bookings (user_id, event_id, quantity, idempotency_key, created_at)
		VALUES ('copy', $1, 1, $2, now()) ON CONFLICT DO NOTHING`, eventID, key); err != nil {
		b.Fatal(err)
	}
	vars := []string{"-D", fmt.Sprintf("event=%d", eventID), "-D", "user=copy", "-D", "key=" + key.String()}
	return runPgbench(b, bin, sc, n, limit, vars,
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

// pgbench's result lines (PostgreSQL 14 and later).
var (
	pgbenchTPSLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	pgbenchTxLine  = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
)

// pgbenchRun is what one pgbench run reported: its tps without initial
// connection time, and what its process spent per transaction.
type pgbenchRun struct {
	tps  float64
	cost clientCost
}

// runPgbench runs pgbench (limit is its -T or -t option) in schema sc with clients
// clients, the scripts (name → text) written to a temporary directory and
// run as the -f arguments files ("name@weight"), and returns its tps
// without initial connection time and its cost per transaction. It connects as the test server's user,
// over the same socket or address, with search_path set to sc.
func runPgbench(b *testing.B, bin string, sc *pgtemp.Schema, clients int, limit string, vars []string, scripts map[string]string, files ...string) pgbenchRun {
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
	args := []string{"-n", "-M", "prepared", limit,
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
	run := pgbenchRun{tps: tps}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if m := pgbenchTxLine.FindSubmatch(out.Bytes()); m != nil && ok {
		if n, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil && n > 0 {
			run.cost = usageOf(ru).since(usage{}, n)
		}
	}
	return run
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
