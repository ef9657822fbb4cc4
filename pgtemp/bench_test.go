//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/learn-idempotency/learn/pgtemp/internal/cluster"
	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
)

// BenchmarkTimeToReady measures how long a person waits for a database, for
// each way Start has, against what a plain script does, timed in the same
// run:
//
//   - baseline: initdb, then pg_ctl start -w, then the first query, in the
//     directory learn would put its cluster in (clusterParent: /dev/shm on
//     Linux when it has room), like for like: initdb --no-sync and a
//     server with learn's own settings (fsync=off and the rest), so storage
//     and durability are the same on both sides and only the template and
//     the way of waiting differ;
//   - baseline-synced: the same with initdb's and the server's defaults
//     (initdb syncs its files, the server runs with fsync on), what a
//     plain script does; printed beside, not the target's reference;
//   - baseline-tmpdir: the like-for-like baseline in os.TempDir(), where
//     `mktemp -d` puts it (skipped when that is the same directory);
//   - warm-local: Start with the cluster template cached (a copy, no initdb);
//   - cold-local: Start with an empty cache (initdb and saving the template);
//   - url: Start in URL mode plus NewSchema, against the package's running
//     server: what a person with DATABASE_URL waits for;
//   - docker: Start in Docker mode (skipped, saying why, when it does not
//     start here: no daemon, or no image and no registry; set
//     LEARN_POSTGRES_IMAGE to a local image such as the one
//     .ci/postgres-image.sh builds).
//
// Each reports its time to ready as ns/op and ms/op (stopping the server is
// not counted), and speedup, the like-for-like baseline's time divided by
// its own (above 1 means faster than the baseline; the target for
// warm-local is 4), speedup-vs-synced and speedup-vs-tmpdir, the same
// against the other two baselines.
//
//	go test -run '^$' -bench Ready -benchtime=5x ./pgtemp/
func BenchmarkTimeToReady(b *testing.B) {
	bin := needLocal(b)
	run, err := runas.Current()
	if err != nil {
		b.Skip(err)
	}
	ctx := context.Background()

	// Means of the baselines, set by the first sub-benchmarks.
	var baseline, baselineSynced, baselineTmp time.Duration
	report := func(b *testing.B, total time.Duration) {
		mean := total / time.Duration(b.N)
		// ns/op would otherwise include stopping and removing the server.
		b.ReportMetric(float64(mean.Nanoseconds()), "ns/op")
		b.ReportMetric(float64(mean.Microseconds())/1000, "ms/op")
		if baseline > 0 {
			b.ReportMetric(float64(baseline)/float64(mean), "speedup")
		}
		if baselineSynced > 0 {
			b.ReportMetric(float64(baselineSynced)/float64(mean), "speedup-vs-synced")
		}
		if baselineTmp > 0 {
			b.ReportMetric(float64(baselineTmp)/float64(mean), "speedup-vs-tmpdir")
		}
	}

	b.Run("baseline", func(b *testing.B) {
		var total time.Duration
		for range b.N {
			total += baselineInitdbPgCtl(b, bin, run, "", true)
		}
		baseline = total / time.Duration(b.N)
		report(b, total)
	})
	b.Run("baseline-synced", func(b *testing.B) {
		var total time.Duration
		for range b.N {
			total += baselineInitdbPgCtl(b, bin, run, "", false)
		}
		baselineSynced = total / time.Duration(b.N)
		report(b, total)
	})
	b.Run("baseline-tmpdir", func(b *testing.B) {
		if filepath.Clean(clusterdir.Parent()) == filepath.Clean(os.TempDir()) {
			b.Skip("learn puts clusters in os.TempDir() here: the baseline above is this one")
		}
		var total time.Duration
		for range b.N {
			total += baselineInitdbPgCtl(b, bin, run, os.TempDir(), true)
		}
		baselineTmp = total / time.Duration(b.N)
		report(b, total)
	})

	startLocal := func(b *testing.B, cache string) time.Duration {
		t0 := time.Now()
		s, err := Start(ctx, Options{Mode: Local, cacheDir: cache})
		took := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		return took
	}
	b.Run("warm-local", func(b *testing.B) {
		cache := b.TempDir()
		startLocal(b, cache) // make the template
		var total time.Duration
		for range b.N {
			total += startLocal(b, cache)
		}
		report(b, total)
	})
	b.Run("cold-local", func(b *testing.B) {
		var total time.Duration
		for range b.N {
			total += startLocal(b, b.TempDir())
		}
		report(b, total)
	})

	b.Run("url", func(b *testing.B) {
		srv := needShared(b)
		var total time.Duration
		for range b.N {
			t0 := time.Now()
			s, err := Start(ctx, Options{Mode: URL, DatabaseURL: srv.ConnString()})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.NewSchema(ctx); err != nil {
				b.Fatal(err)
			}
			total += time.Since(t0)
			if err := s.Close(); err != nil { // drops the schema
				b.Fatal(err)
			}
		}
		report(b, total)
	})

	b.Run("docker", func(b *testing.B) {
		var total time.Duration
		for i := range b.N {
			t0 := time.Now()
			s, err := Start(ctx, Options{Mode: Docker})
			took := time.Since(t0)
			switch {
			case errors.Is(err, ErrNoPostgres):
				b.Skipf("no Docker here, nothing to time: %v", err)
			case err != nil && i == 0:
				// No image and no registry, say: the Docker way's own
				// tests judge its errors; this only times it.
				b.Skipf("the Docker way does not start here, nothing to time: %v", err)
			case err != nil:
				b.Fatal(err)
			}
			total += took
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
		report(b, total)
	})
}

// baselineInitdbPgCtl times initdb + pg_ctl start -w + SELECT 1 in a
// directory like the ones Start uses (in parent; "" = where Start puts
// them), then stops and removes the cluster. likeForLike runs initdb with
// --no-sync and the server with the settings learn's own cluster has
// (fsync=off and the rest); otherwise both keep their defaults. The directory has an owner
// file, so that if the benchmark is killed the next Start reaps it (and
// stops its postmaster, which pg_ctl detached from the benchmark).
func baselineInitdbPgCtl(b *testing.B, bin cluster.Binaries, run runas.Runner, parent string, likeForLike bool) time.Duration {
	dir, err := clusterdir.Make(parent, run)
	if err != nil {
		b.Fatal(err)
	}
	if err := owner.Write(dir, 0); err != nil {
		os.Remove(dir)
		b.Fatal(err)
	}
	if err := cluster.HandOver(dir, run); err != nil {
		os.RemoveAll(dir)
		b.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	pgctl := func(args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin.Dir, "pg_ctl"), append([]string{"-D", data}, args...)...)
		cmd.Dir, cmd.Env = dir, cluster.ServerEnv()
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: run.Cred}
		return cmd
	}
	defer func() {
		pgctl("stop", "-m", "immediate").Run()
		os.RemoveAll(dir)
	}()

	t0 := time.Now()
	initdbArgs := []string{"-D", data, "-U", "learn", "--auth=trust"}
	serverOpts := "-k " + dir + " -c listen_addresses=''"
	if likeForLike {
		initdbArgs = append(initdbArgs, "--locale=C", "-E", "UTF8", "--no-sync")
		serverOpts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=250" +
			" -c shared_buffers=32MB -c dynamic_shared_memory_type=mmap -c max_wal_size=128MB -c min_wal_size=32MB"
	}
	initdb := exec.Command(filepath.Join(bin.Dir, "initdb"), initdbArgs...)
	initdb.Dir, initdb.Env = dir, cluster.ServerEnv()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: run.Cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		b.Fatalf("initdb: %v\n%s", err, out)
	}
	if out, err := pgctl("start", "-w", "-l", filepath.Join(data, "log"), "-o", serverOpts).CombinedOutput(); err != nil {
		b.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
	conn, err := pgx.Connect(context.Background(), cluster.ConnString(dir))
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
