package pgtemp

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
)

const (
	// maxSocketPath is the longest Unix socket path (sun_path holds 108
	// bytes with its terminating NUL on Linux; 104 on macOS, where TMPDIR
	// is long, hence the fall back to /tmp).
	maxSocketPath = 103
	socketName    = ".s.PGSQL.5432"
	readyTimeout  = 30 * time.Second
	// fastShutdown is how long a postmaster gets for a fast shutdown at
	// Close before the immediate one: with fsync off it takes well under a
	// second, and a server that has not stopped by then does not answer
	// (hung, stopped); the cluster is thrown away either way.
	fastShutdown = 2 * time.Second
	// quitWait is how long a postmaster gets to stop after SIGQUIT when a
	// start is abandoned, before its process group is killed.
	quitWait = 2 * time.Second

	// memDir is where a cluster goes when it is a memory file system with
	// room (see clusterParent).
	memDir = "/dev/shm"
	// memDirMinFree is the room memDir must have: the template is ~40 MB,
	// and max_wal_size bounds the WAL (see start).
	memDirMinFree = 256 << 20
	tmpfsMagic    = 0x01021994 // statfs f_type of tmpfs (linux/magic.h)
)

// cluster is a private PostgreSQL cluster in a temporary directory:
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
// stops, or by releaseSharedMemory when it was killed.
type cluster struct {
	dir  string
	root *os.Root // dir, opened before the hand-over to the cluster user
	bin  binaries
	run  runner
	pm   *proc
	logs *tailbuf.Buffer

	// initdbTook is how long initdb ran (0 when the template was copied);
	// templateErr says why the template could not be saved after it.
	initdbTook  time.Duration
	templateErr error

	// Once the start succeeded, the watcher (watch.go) owns pm until
	// close stops it (watchStop) and it has returned (watchDone).
	health    healthState
	watchStop context.CancelFunc
	watchDone chan struct{}

	closeOnce sync.Once
	closeErr  error
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// startLocal finds the binaries on this machine and starts a cluster with
// them (startCluster).
func startLocal(ctx context.Context, opts *Options, t0 time.Time) (s *Server, err error) {
	opts.logf("looking for PostgreSQL server binaries…")
	f := systemFinder(ctx, opts.cacheDir)
	if opts.finder != nil {
		f = *opts.finder
	}
	bin, err := findBinaries(ctx, f)
	if err != nil {
		return nil, err
	}
	opts.logf("using PostgreSQL %s in %s", bin.version, bin.dir)
	return startCluster(ctx, opts, t0, clusterSpec{mode: Local, bin: bin,
		label: fmt.Sprintf("local PostgreSQL %s (%s)", bin.version, bin.dir)})
}

// clusterSpec says which binaries startCluster runs and how the server is
// named: Local for binaries found on this machine, Download for binaries
// learn downloaded into its cache.
type clusterSpec struct {
	mode  Mode
	bin   binaries
	label string // the start of Server.Describe, e.g. "local PostgreSQL 15.18 (/usr/lib/postgresql/15/bin)"
	// stage, when not nil, runs once the cluster directory exists and
	// returns the binaries to run instead of bin (the download way copies
	// them there when the cluster user cannot reach learn's cache).
	stage func(ctx context.Context, dir string, run runner) (binaries, error)
}

// startCluster builds a cluster with spec's binaries (copying the template,
// or running initdb and saving a template), starts the postmaster and waits
// until it answers. On any failure, or when ctx ends, the postmaster is
// killed and the directory removed before it returns.
func startCluster(ctx context.Context, opts *Options, t0 time.Time, spec clusterSpec) (s *Server, err error) {
	bin := spec.bin
	run, err := currentRunner()
	if err != nil {
		return nil, err
	}

	// Clusters of learn processes that were killed outright go first.
	if _, err := reap(ctx, reapParents(opts.tmpParent), run, opts.Logf); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		opts.logf("%v", err)
	}
	// So do the template copies of those killed while saving one.
	if _, err := reapTemplateCopies(cacheRoot(opts.cacheDir), opts.Logf); err != nil {
		opts.logf("%v", err)
	}

	dir, err := makeClusterDir(opts.tmpParent, run)
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, bin: bin, run: run, logs: tailbuf.New(64 << 10)}
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
	if err = writeOwnerIn(c.root, 0); err != nil {
		return nil, inDir(filepath.Dir(dir), fmt.Errorf("could not write %s: %w", filepath.Join(dir, ownerFile), err), "")
	}
	if spec.stage != nil {
		if bin, err = spec.stage(ctx, dir, run); err != nil {
			return nil, inDir(filepath.Dir(dir), err, "")
		}
		c.bin = bin
	}

	tmpl := templatePath(opts.cacheDir, bin.major, run.uid)
	fromTemplate := false
	if tmpl != "" && templateUsable(tmpl, bin.major) {
		opts.logf("copying the cluster template…")
		cerr := copyTemplate(ctx, tmpl, c.data())
		switch {
		case cerr == nil:
			fromTemplate = true
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case noSpace(cerr, ""):
			return nil, inDir(filepath.Dir(dir), cerr, "") // initdb would not fit either
		default:
			opts.logf("could not copy the cluster template (%v); running initdb instead", cerr)
			if err = removeAll(c.data()); err != nil {
				return nil, err
			}
		}
	}
	if err = c.handOver(); err != nil {
		return nil, err
	}
	ranInitdb := false
	if !fromTemplate {
		if err = c.initdb(ctx, opts, tmpl, false); err != nil {
			return nil, err
		}
		ranInitdb = true
	}

	// A full directory is said as such; it is no reason to rebuild the
	// template (which would discard a good one).
	err = inDir(filepath.Dir(dir), c.start(ctx, opts), c.logs.Lines(40))
	if _, full := errors.AsType[*diskFullError](err); err != nil && !full && fromTemplate && ctx.Err() == nil && c.pm != nil && c.pm.exited() {
		// The copied template does not start: rebuild it from a fresh initdb.
		opts.logf("the cluster from the template did not start (%v); running initdb and rebuilding the template", err)
		releaseSharedMemory(c.data(), c.run.uid, c.pm.pid())
		c.pm = nil
		// The directory is the cluster user's now: remove through the
		// handle opened before the hand-over, never by a path that a
		// link planted there could lead elsewhere.
		if err = c.root.RemoveAll("data"); err != nil {
			return nil, err
		}
		if err = c.initdb(ctx, opts, tmpl, true); err != nil {
			return nil, err
		}
		ranInitdb = true
		err = inDir(filepath.Dir(dir), c.start(ctx, opts), c.logs.Lines(40))
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
	c.health.set(func(h *Health) { *h = Health{State: Up, PID: c.pm.pid(), Since: time.Now()} })
	wctx, stop := context.WithCancel(context.Background())
	c.watchStop, c.watchDone = stop, make(chan struct{})
	go c.watch(wctx, *opts)
	s = &Server{
		mode:       spec.mode,
		connString: c.connString(),
		cfg:        cfg,
		readyIn:    time.Since(t0),
		ranInitdb:  ranInitdb,
		initdbTook: c.initdbTook,
		tmplErr:    c.templateErr,
		local:      c,
		describe:   fmt.Sprintf("%s, cluster in %s running as %s", spec.label, dir, run.name),
	}
	opts.logf("PostgreSQL ready in %s", s.readyIn.Round(time.Millisecond))
	return s, nil
}

// copyTemplate copies the template (in learn's own cache) to data.
func copyTemplate(ctx context.Context, tmpl, data string) error {
	src, err := os.OpenRoot(tmpl)
	if err != nil {
		return err
	}
	defer src.Close()
	return copyTree(ctx, src, data, nil)
}

// handOver gives the cluster directory and everything in it to the cluster
// user (when learn runs as root). Until then the directory is learn's own
// and 0700, so nobody else can have put anything in it: the owner file and
// the template copy are written, and every path chowned, before anyone
// else may write there. After it, learn as root writes there only through
// c.root, which never leaves the directory, whatever links the cluster user
// plants (os.Root), and reads only files it proves its own (readOwner).
func (c *cluster) handOver() error {
	if c.run.cred == nil {
		return nil
	}
	err := filepath.WalkDir(c.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == c.dir || d.Name() == ownerFile {
			return nil // the directory last; the owner file stays learn's
		}
		return os.Lchown(path, c.run.uid, c.run.gid)
	})
	if err == nil {
		err = os.Lchown(c.dir, c.run.uid, c.run.gid)
	}
	if err != nil {
		return fmt.Errorf("could not give %s to %s: %w", c.dir, c.run, err)
	}
	return nil
}

// initdb creates the cluster in place and then saves it as the template
// (a failure to save only costs the next run time, so it is logged and
// kept in c.templateErr, with initdb's time in c.initdbTook).
func (c *cluster) initdb(ctx context.Context, opts *Options, tmpl string, replace bool) error {
	opts.logf("initdb (the first run takes a moment; later runs copy a template)…")
	t0 := time.Now()
	out := tailbuf.New(16 << 10)
	cmd := exec.Command(filepath.Join(c.bin.dir, "initdb"),
		"-D", c.data(), "-U", "learn", "--auth=trust", "--locale=C", "-E", "UTF8", "--no-sync")
	cmd.Dir = c.dir
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = out, out
	// SIGINT, not SIGKILL, when learn dies or gives up: initdb then
	// cleans up after itself, its bootstrap backend's shared memory
	// included (see proc.interrupt).
	cmd.SysProcAttr = c.run.sysProcAttr(syscall.SIGINT)
	p, err := startProc(cmd)
	if err != nil {
		return fmt.Errorf("could not run initdb from %s: %w", c.bin.dir, err)
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.interrupt(3 * time.Second) // initdb and the postgres it runs in bootstrap mode
		return ctx.Err()
	}
	if p.err != nil {
		return inDir(filepath.Dir(c.dir), fmt.Errorf("initdb failed (%v); its last output:\n%s", p.err, out.Lines(20)), out.Lines(20))
	}
	c.initdbTook = time.Since(t0)
	if tmpl == "" {
		c.templateErr = errNoCacheDir
		return nil
	}
	data, err := c.root.OpenRoot("data")
	if err == nil {
		err = saveTemplate(ctx, data, tmpl, replace)
		data.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.templateErr = templateSaveError(filepath.Dir(tmpl), err)
		opts.logf("could not save the cluster template: %v; every start runs initdb (%s) until it can", c.templateErr, c.initdbTook.Round(100*time.Millisecond))
	}
	return nil
}

// start execs the postmaster and waits until it answers SELECT 1. On failure
// the postmaster is left for the caller to kill (c.pm tells whether it ran).
func (c *cluster) start(ctx context.Context, opts *Options) error {
	opts.logf("starting PostgreSQL…")
	cmd := exec.Command(filepath.Join(c.bin.dir, "postgres"),
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
		"-c", opts.maxConnections(),
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
	cmd.Env = serverEnv()
	// The log goes through a pipe of learn's own, copied into c.logs by a
	// goroutine that ends once every process holding it has exited: the
	// backends share it, and may outlive a postmaster that was killed, so
	// with os/exec's own copying, the postmaster's end (pm.done, which
	// the watcher waits for) would wait for theirs.
	logR, logW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("could not make a pipe for PostgreSQL's log: %w", err)
	}
	cmd.Stdout, cmd.Stderr = logW, logW
	cmd.SysProcAttr = c.run.sysProcAttr(syscall.SIGQUIT) // immediate shutdown if learn dies
	pm, err := startProc(cmd)
	logW.Close() // the postmaster has its own copy
	if err != nil {
		logR.Close()
		return fmt.Errorf("could not run %s: %w", cmd.Path, err)
	}
	pm.logDone = make(chan struct{})
	go func() {
		defer close(pm.logDone)
		_, _ = io.Copy(c.logs, logR)
		logR.Close()
	}()
	c.pm = pm
	if err := writeOwnerIn(c.root, pm.pid()); err != nil {
		return fmt.Errorf("could not write %s: %w", filepath.Join(c.dir, ownerFile), err)
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
		if probe(ctx, cfg) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-pm.done:
			pm.drained(logDrain)
			return fmt.Errorf("PostgreSQL exited while starting (%v); its log ends with:\n%s", pm.err, c.logs.Lines(20))
		case <-deadline.C:
			return fmt.Errorf("PostgreSQL did not accept connections within %s; its log ends with:\n%s", readyTimeout, c.logs.Lines(20))
		case <-tick.C:
		}
	}
}

// probe connects and runs SELECT 1.
func probe(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// connString is the keyword/value connection string for the cluster.
func (c *cluster) connString() string {
	return fmt.Sprintf("host=%s port=5432 user=learn dbname=postgres sslmode=disable", kvQuote(c.dir))
}

// close stops the postmaster and removes the directory. It is idempotent.
func (c *cluster) close() error {
	c.closeOnce.Do(func() {
		if c.watchStop != nil {
			c.watchStop() // a restart under way gives up
			<-c.watchDone
		}
		if c.pm != nil {
			c.pm.stopPostmaster(fastShutdown)
		}
		c.closeErr = c.remove()
	})
	return c.closeErr
}

// abandon ends a start that failed or was cancelled: the postmaster gets
// SIGQUIT (immediate shutdown, which also removes its shared memory) and
// quitWait to stop before its process group is killed; then the directory
// goes. It runs once, before the cluster is handed out, so close is never
// called on it.
func (c *cluster) abandon() {
	if c.pm != nil {
		c.pm.quit(quitWait)
	}
	c.remove()
}

// remove removes the System V shared memory segment a killed postmaster or
// initdb left, then the directory. Every process of the cluster must have
// exited.
func (c *cluster) remove() error {
	var errs []error
	pmPID := 0
	if c.pm != nil {
		pmPID = c.pm.pid()
	}
	if _, err := releaseSharedMemory(c.data(), c.run.uid, pmPID); err != nil {
		errs = append(errs, fmt.Errorf("could not remove the PostgreSQL cluster's shared memory: %w; `ipcs -m` lists it, `ipcrm -m <id>` removes it", err))
	}
	if c.root != nil {
		c.root.Close()
	}
	// os.RemoveAll never follows a link: it removes one that replaced the
	// directory, and everything below it through handles of its own.
	if err := removeAll(c.dir); err != nil {
		errs = append(errs, fmt.Errorf("could not remove the PostgreSQL cluster directory: %w; remove %s by hand", err, c.dir))
	}
	return errors.Join(errs...)
}

// removeAll is os.RemoveAll retried briefly, for files a dying process was
// still creating.
func removeAll(dir string) error {
	var err error
	for i := 0; i < 5; i++ {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}
