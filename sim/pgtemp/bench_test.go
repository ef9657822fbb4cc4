package pgtemp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BenchmarkTimeToReady measures how long a person waits for a database:
// Start from the cached template (warm), Start with an empty cache (cold:
// initdb and saving the template), and, as the baseline, what a plain script
// does: initdb, then pg_ctl start -w, then the first query. It reports each
// in milliseconds and the baseline divided by warm.
func BenchmarkTimeToReady(b *testing.B) {
	bin := needLocal(b)
	run, err := currentRunner()
	if err != nil {
		b.Skip(err)
	}
	cache := b.TempDir()
	ctx := context.Background()
	start := func(cache string) time.Duration {
		s, err := Start(ctx, Options{Mode: Local, cacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		d := s.ReadyIn()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		return d
	}
	start(cache) // make the template

	var warm, cold, plain time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		warm += start(cache)
		plain += baselineInitdbPgCtl(b, bin, run)
		cold += start(b.TempDir())
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(warm), "warm-ms")
	b.ReportMetric(ms(cold), "cold-ms")
	b.ReportMetric(ms(plain), "initdb+pg_ctl-ms")
	b.ReportMetric(float64(plain)/float64(warm), "baseline/warm")
}

// baselineInitdbPgCtl times initdb + pg_ctl start -w + SELECT 1 in a
// directory like the ones Start uses, then stops and removes the cluster.
func baselineInitdbPgCtl(b *testing.B, bin binaries, run runner) time.Duration {
	dir, err := makeClusterDir("", run)
	if err != nil {
		b.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	pgctl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin.dir, "pg_ctl"), append([]string{"-D", data}, args...)...)
		cmd.Dir, cmd.Env = dir, serverEnv()
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: run.cred}
		return cmd
	}
	defer func() {
		pgctl("stop", "-m", "immediate").Run()
		os.RemoveAll(dir)
	}()

	t0 := time.Now()
	initdb := exec.Command(filepath.Join(bin.dir, "initdb"), "-D", data, "-U", "learn", "--auth=trust")
	initdb.Dir, initdb.Env = dir, serverEnv()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: run.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		b.Fatalf("initdb: %v\n%s", err, out)
	}
	if out, err := pgctl("start", "-w", "-l", filepath.Join(dir, "log"), "-o", "-k "+dir+" -c listen_addresses=''").CombinedOutput(); err != nil {
		b.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
	conn, err := pgx.Connect(context.Background(), (&cluster{dir: dir}).connString())
	if err != nil {
		b.Fatal(err)
	}
	var one int
	err = conn.QueryRow(context.Background(), "SELECT 1").Scan(&one)
	took := time.Since(t0)
	conn.Close(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return took
}
