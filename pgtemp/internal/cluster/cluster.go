// Package cluster runs a private PostgreSQL cluster from server binaries:
// what the local way (binaries found on this machine) and the download way
// (binaries learn downloaded) share, so that neither calls the other.
//
//   - [Start] (cluster.go) reaps what killed learn processes left, makes
//     the cluster directory (clusterdir), copies the template or runs
//     initdb and saves one (template), hands the directory to the cluster
//     user (runas), starts the postmaster (proc) and waits until it
//     answers; its [Spec] names the [Binaries] and how to say the server.
//   - watch.go follows the postmaster until Close and starts it again on
//     the same data when it exits.
//   - binaries.go and version.go: `postgres --version`, remembered per
//     binary in the cache, and the environment PostgreSQL programs get.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/internal/tailbuf"
	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/pgsql"
	"github.com/learn-idempotency/learn/pgtemp/internal/proc"
	"github.com/learn-idempotency/learn/pgtemp/internal/reap"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/shm"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

const (
	readyTimeout = 30 * time.Second
	// fastShutdown is how long a postmaster gets for a fast shutdown at
	// Close before the immediate one: with fsync off it takes well under a
	// second, and a server that has not stopped by then does not answer
	// (hung, stopped); the cluster is thrown away either way.
	fastShutdown = 2 * time.Second
	// quitWait is how long a postmaster gets to stop after SIGQUIT when a
	// start is abandoned, before its process group is killed.
	quitWait = 2 * time.Second
)

// Cluster is a private PostgreSQL cluster in a temporary directory:
//
//	<dir>/                 0700, owned by the cluster user; also the socket directory
//	<dir>/data/            the data directory
//	<dir>/.s.PGSQL.5432    the Unix socket (no TCP listener)
//	<dir>/learn.owner      learn's pid and start time and the postmaster's pid
//
// Everything the cluster makes lives in <dir> or in its processes' memory:
// its shared memory is anonymous (PostgreSQL's default), its dynamic shared
// memory segments are files in data/pg_dynshmem (dynamic_shared_memory_type
// = mmap, instead of /dev/shm/PostgreSQL.*), and the one System V segment
// PostgreSQL keeps as an interlock is removed by the postmaster when it
// stops, or by shm.Release when it was killed.
type Cluster struct {
	dir  string
	root *os.Root // dir, opened before the hand-over to the cluster user
	bin  Binaries
	run  runas.Runner
	pm   *proc.Proc
	logs *tailbuf.Buffer

	// initdbTook is how long initdb ran (0 when the template was copied);
	// templateErr says why the template could not be saved after it.
	initdbTook  time.Duration
	templateErr error

	// Once the start succeeded, the watcher (watch.go) owns pm until
	// close stops it (watchStop) and it has returned (watchDone).
	health    way.Watch
	watchStop context.CancelFunc
	watchDone chan struct{}

	closeOnce sync.Once
	closeErr  error
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// Spec says which binaries Start runs and how the server is named: the
// local way's, found on this machine, or the download way's, in learn's
// cache.
type Spec struct {
	Bin   Binaries
	Label string // the start of Instance.Describe, e.g. "local PostgreSQL 15.18 (/usr/lib/postgresql/15/bin)"
	// Stage, when not nil, runs once the cluster directory exists and
	// returns the binaries to run instead of Bin (the download way copies
	// them there when the cluster user cannot reach learn's cache).
	Stage func(ctx context.Context, dir string, run runas.Runner) (Binaries, error)
}

// Start builds a cluster with spec's Binaries (copying the template,
// or running initdb and saving a template), starts the postmaster and waits
// until it answers. On any failure, or when ctx ends, the postmaster is
// killed and the directory removed before it returns. Before it makes
// anything it reaps the clusters and template copies of learn processes
// that were killed (reap.Clusters, template.ReapCopies). The Instance's
// Impl is the *Cluster.
func Start(ctx context.Context, env *way.Env, spec Spec) (inst *way.Instance, err error) {
	bin := spec.Bin
	run, err := runas.Current()
	if err != nil {
		return nil, err
	}

	// Clusters of learn processes that were killed outright go first.
	if _, err := reap.Clusters(ctx, clusterdir.Parents(env.TmpParent), run, env.Logf); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		env.Log("%v", err)
	}
	// So do the template copies of those killed while saving one.
	if _, err := template.ReapCopies(template.CacheRoot(env.CacheDir), env.Logf); err != nil {
		env.Log("%v", err)
	}

	dir, err := clusterdir.Make(env.TmpParent, run)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin, run: run, logs: tailbuf.New(64 << 10)}
	defer func() {
		if err != nil {
			c.abandon()
		}
	}()
	// A handle on the directory, for what learn writes there after the
	// hand-over to the cluster user (see handOver).
	if c.root, err = os.OpenRoot(dir); err != nil {
		return nil, fmt.Errorf("could not open %s: %w", dir, err)
	}
	if err = owner.WriteIn(c.root, 0); err != nil {
		return nil, clusterdir.InDir(filepath.Dir(dir), fmt.Errorf("could not write %s: %w", filepath.Join(dir, owner.File), err), "")
	}
	if spec.Stage != nil {
		if bin, err = spec.Stage(ctx, dir, run); err != nil {
			return nil, clusterdir.InDir(filepath.Dir(dir), err, "")
		}
		c.bin = bin
	}

	tmpl := template.Path(env.CacheDir, bin.Major, run.UID)
	fromTemplate := false
	if tmpl != "" && template.Usable(tmpl, bin.Major) {
		env.Log("copying the cluster template…")
		cerr := copyTemplate(ctx, tmpl, c.data())
		switch {
		case cerr == nil:
			fromTemplate = true
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case clusterdir.NoSpace(cerr, ""):
			return nil, clusterdir.InDir(filepath.Dir(dir), cerr, "") // initdb would not fit either
		default:
			env.Log("could not copy the cluster template (%v); running initdb instead", cerr)
			if err = clusterdir.RemoveAll(c.data()); err != nil {
				return nil, err
			}
		}
	}
	if err = c.handOver(); err != nil {
		return nil, err
	}
	ranInitdb := false
	if !fromTemplate {
		if err = c.initdb(ctx, env, tmpl, false); err != nil {
			return nil, err
		}
		ranInitdb = true
	}

	// A full directory is said as such; it is no reason to rebuild the
	// template (which would discard a good one).
	err = clusterdir.InDir(filepath.Dir(dir), c.start(ctx, env), c.logs.Lines(40))
	if _, full := errors.AsType[*clusterdir.DiskFullError](err); err != nil && !full && fromTemplate && ctx.Err() == nil && c.pm != nil && c.pm.Exited() {
		// The copied template does not start: rebuild it from a fresh initdb.
		env.Log("the cluster from the template did not start (%v); running initdb and rebuilding the template", err)
		shm.Release(c.data(), c.run.UID, c.pm.PID())
		c.pm = nil
		// The directory is the cluster user's now: remove through the
		// handle opened before the hand-over, never by a path that a
		// link planted there could lead elsewhere.
		if err = c.root.RemoveAll("data"); err != nil {
			return nil, err
		}
		if err = c.initdb(ctx, env, tmpl, true); err != nil {
			return nil, err
		}
		ranInitdb = true
		err = clusterdir.InDir(filepath.Dir(dir), c.start(ctx, env), c.logs.Lines(40))
	}
	if err != nil {
		return nil, err
	}

	cfg, err := pgx.ParseConfig(c.connString())
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = 5 * time.Second
	// From here on learn watches the postmaster, and starts it again
	// should it exit before Close.
	c.health.Set(func(h *way.Health) { *h = way.Health{State: way.Up, PID: c.pm.PID(), Since: time.Now()} })
	wctx, stop := context.WithCancel(context.Background())
	c.watchStop, c.watchDone = stop, make(chan struct{})
	go c.watch(wctx, env.Quiet())
	inst = &way.Instance{
		ConnString:  c.connString(),
		Config:      cfg,
		Describe:    fmt.Sprintf("%s, cluster in %s running as %s", spec.Label, dir, run.Name),
		Disposable:  true,
		RanInitdb:   ranInitdb,
		InitdbTook:  c.initdbTook,
		TemplateErr: c.templateErr,
		Health:      &c.health,
		Close:       c.close,
		Impl:        c,
	}
	env.Log("PostgreSQL ready in %s", time.Since(env.Started).Round(time.Millisecond))
	return inst, nil
}

// copyTemplate copies the template (in learn's own cache) to data.
func copyTemplate(ctx context.Context, tmpl, data string) error {
	src, err := os.OpenRoot(tmpl)
	if err != nil {
		return err
	}
	defer src.Close()
	return template.CopyTree(ctx, src, data, nil)
}

// handOver gives the cluster directory and everything in it to the cluster
// user (when learn runs as root). Until then the directory is learn's own
// and 0700, so nobody else can have put anything in it: the owner file and
// the template copy are written, and every path chowned, before anyone
// else may write there. After it, learn as root writes there only through
// c.root, which never leaves the directory, whatever links the cluster user
// plants (os.Root), and reads only files it proves its own (readOwner).
func (c *Cluster) handOver() error {
	if c.run.Cred == nil {
		return nil
	}
	err := filepath.WalkDir(c.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == c.dir || d.Name() == owner.File {
			return nil // the directory last; the owner file stays learn's
		}
		return os.Lchown(path, c.run.UID, c.run.GID)
	})
	if err == nil {
		err = os.Lchown(c.dir, c.run.UID, c.run.GID)
	}
	if err != nil {
		return fmt.Errorf("could not give %s to %s: %w", c.dir, c.run, err)
	}
	return nil
}

// initdb creates the cluster in place and then saves it as the template
// (a failure to save only costs the next run time, so it is logged and
// kept in c.templateErr, with initdb's time in c.initdbTook).
func (c *Cluster) initdb(ctx context.Context, env *way.Env, tmpl string, replace bool) error {
	env.Log("initdb (the first run takes a moment; later runs copy a template)…")
	t0 := time.Now()
	out := tailbuf.New(16 << 10)
	cmd := exec.Command(filepath.Join(c.bin.Dir, "initdb"),
		"-D", c.data(), "-U", "learn", "--auth=trust", "--locale=C", "-E", "UTF8", "--no-sync")
	cmd.Dir = c.dir
	cmd.Env = ServerEnv()
	cmd.Stdout, cmd.Stderr = out, out
	// SIGINT, not SIGKILL, when learn dies or gives up: initdb then
	// cleans up after itself, its bootstrap backend's shared memory
	// included (see proc.Proc.interrupt).
	cmd.SysProcAttr = c.run.SysProcAttr(syscall.SIGINT)
	p, err := proc.Start(cmd)
	if err != nil {
		return fmt.Errorf("could not run initdb from %s: %w", c.bin.Dir, err)
	}
	select {
	case <-p.Done:
	case <-ctx.Done():
		p.Interrupt(3 * time.Second) // initdb and the postgres it runs in bootstrap mode
		return ctx.Err()
	}
	if p.Err != nil {
		return clusterdir.InDir(filepath.Dir(c.dir), fmt.Errorf("initdb failed (%v); its last output:\n%s", p.Err, out.Lines(20)), out.Lines(20))
	}
	c.initdbTook = time.Since(t0)
	if tmpl == "" {
		c.templateErr = template.ErrNoCacheDir
		return nil
	}
	data, err := c.root.OpenRoot("data")
	if err == nil {
		err = template.Save(ctx, data, tmpl, replace)
		data.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.templateErr = template.SaveError(filepath.Dir(tmpl), err)
		env.Log("could not save the cluster template: %v; every start runs initdb (%s) until it can", c.templateErr, c.initdbTook.Round(100*time.Millisecond))
	}
	return nil
}

// start execs the postmaster and waits until it answers SELECT 1. On failure
// the postmaster is left for the caller to kill (c.pm tells whether it ran).
func (c *Cluster) start(ctx context.Context, env *way.Env) error {
	env.Log("starting PostgreSQL…")
	cmd := exec.Command(filepath.Join(c.bin.Dir, "postgres"),
		"-D", c.data(),
		"-k", c.dir,
		"-p", "5432",
		"-c", "listen_addresses=",
		// fsync off: the cluster is thrown away, and a crash of the
		// machine is no case learn keeps data across. synchronous_commit
		// stays on: a COMMIT that was answered is then in the WAL (in the
		// kernel's page cache, without fsync), so when the postmaster is
		// killed and started again (watch.go) no answered booking is lost.
		"-c", "fsync=off",
		"-c", "full_page_writes=off",
		"-c", env.MaxConnectionsSetting(),
		"-c", "shared_buffers=32MB",
		// Dynamic shared memory as files in data/pg_dynshmem, removed
		// with the directory, rather than /dev/shm/PostgreSQL.* files
		// that a killed postmaster leaves behind.
		"-c", "dynamic_shared_memory_type=mmap",
		// The cluster may live in memory: keep its WAL small (the
		// default lets it grow to 1 GB).
		"-c", "max_wal_size=128MB",
		"-c", "min_wal_size=32MB",
	)
	cmd.Dir = c.dir
	cmd.Env = ServerEnv()
	// The log goes through a pipe of learn's own, copied into c.logs by a
	// goroutine that ends once every process holding it has exited: the
	// backends share it, and may outlive a postmaster that was killed, so
	// with os/exec's own copying, the postmaster's end (pm.Done, which
	// the watcher waits for) would wait for theirs.
	logR, logW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("could not make a pipe for PostgreSQL's log: %w", err)
	}
	cmd.Stdout, cmd.Stderr = logW, logW
	cmd.SysProcAttr = c.run.SysProcAttr(syscall.SIGQUIT) // immediate shutdown if learn dies
	pm, err := proc.Start(cmd)
	logW.Close() // the postmaster has its own copy
	if err != nil {
		logR.Close()
		return fmt.Errorf("could not run %s: %w", cmd.Path, err)
	}
	pm.LogDone = make(chan struct{})
	go func() {
		defer close(pm.LogDone)
		_, _ = io.Copy(c.logs, logR)
		logR.Close()
	}()
	c.pm = pm
	if err := owner.WriteIn(c.root, pm.PID()); err != nil {
		return fmt.Errorf("could not write %s: %w", filepath.Join(c.dir, owner.File), err)
	}

	cfg, err := pgx.ParseConfig(c.connString())
	if err != nil {
		return err
	}
	cfg.ConnectTimeout = time.Second
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if pgsql.Ping(ctx, cfg) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-pm.Done:
			pm.Drained(proc.LogDrain)
			return fmt.Errorf("PostgreSQL exited while starting (%v); its log ends with:\n%s", pm.Err, c.logs.Lines(20))
		case <-deadline.C:
			return fmt.Errorf("PostgreSQL did not accept connections within %s; its log ends with:\n%s", readyTimeout, c.logs.Lines(20))
		case <-tick.C:
		}
	}
}

// connString is the keyword/value connection string for the cluster.
func (c *Cluster) connString() string {
	return fmt.Sprintf("host=%s port=5432 user=learn dbname=postgres sslmode=disable", pgsql.KVQuote(c.dir))
}

// Dir is the cluster directory; Data its data directory.
func (c *Cluster) Dir() string  { return c.dir }
func (c *Cluster) Data() string { return c.data() }

// PID is the process id of the postmaster that runs now (0 before one ran).
func (c *Cluster) PID() int {
	if c.pm == nil {
		return 0
	}
	return c.pm.PID()
}

// Runner is the user the cluster runs as; BinDir the directory of its
// server binaries.
func (c *Cluster) Runner() runas.Runner { return c.run }
func (c *Cluster) BinDir() string       { return c.bin.Dir }

// StopWatching stops following the postmaster, as if the learn that
// started the cluster were gone: for a test that kills the postmaster to
// play a killed learn's cluster. Close still stops and removes it.
func (c *Cluster) StopWatching() {
	if c.watchStop != nil {
		c.watchStop()
		<-c.watchDone
	}
}

// HandOver gives the directory dir, made by clusterdir.Make, to run (see
// handOver): for a cluster made by other means than Start (a benchmark's
// baseline).
func HandOver(dir string, run runas.Runner) error {
	return (&Cluster{dir: dir, run: run}).handOver()
}

// ConnString is the keyword/value connection string of a cluster in dir.
func ConnString(dir string) string { return (&Cluster{dir: dir}).connString() }

// Postmaster is the postmaster that runs now (nil before one ran); Bin
// the binaries the cluster runs.
func (c *Cluster) Postmaster() *proc.Proc { return c.pm }
func (c *Cluster) Bin() Binaries          { return c.bin }
