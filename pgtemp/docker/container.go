package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/learn-idempotency/learn/internal/tailbuf"
	"github.com/learn-idempotency/learn/pgtemp/internal/pgsql"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// Container is a PostgreSQL container learn started.
type Container struct {
	daemon *daemon
	ctr    *tcpostgres.PostgresContainer // nil until testcontainers-go created it
	runID  string
	name   string
	ran    bool // testcontainers-go was asked to create the container

	// Once the start succeeded, watch follows the container until close
	// stops it (watchStop) and it has returned (watchDone).
	health    way.Watch
	watchStop context.CancelFunc
	watchDone chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// RunID is the value of the container's learn.run label.
func (dc *Container) RunID() string { return dc.runID }

// Name is the container's name, learn-postgres-<run id>.
func (dc *Container) Name() string { return dc.name }

// ID is the container's id ("" when there is none).
func (dc *Container) ID() string {
	if dc.ctr == nil {
		return ""
	}
	return dc.ctr.GetContainerID()
}

// pgPort is the server's port inside the container.
const pgPort = "5432/tcp"

func start(ctx context.Context, env *way.Env) (inst *way.Instance, err error) {
	logs := &tcLogger{logf: env.Logf}
	defer logs.stop()

	env.Log("looking for a Docker daemon…")
	d, err := findDaemon(ctx)
	if err != nil {
		return nil, err
	}
	dc := &Container{daemon: d, runID: randomHex(8)}
	dc.name = "learn-postgres-" + dc.runID
	defer func() {
		if r := recover(); r != nil {
			err = panicError(r)
		}
		if err != nil {
			dc.close()
		}
	}()
	env.Log("using %s; %s", d, reaperStatus())
	if _, err := reapContainers(ctx, d.cli.Client, env.Log); err != nil && ctx.Err() == nil {
		env.Log("could not look for containers of earlier learn runs: %v", err)
	}

	image := Image()
	if err := ensureImage(ctx, d.cli.Client, image, env.Log); err != nil {
		return nil, err
	}

	password := randomHex(16)
	w := &queryWait{user: dockerUser, password: password, db: dockerDB, local: d.local(), timeout: readyTimeout}
	// Creating and starting the container is not cancelled with ctx: a
	// daemon goes on creating a container whose client hung up, after
	// learn could look for it. ctx ends the wait instead (untilStopped),
	// and the container, known by then, is removed.
	runCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runTimeout)
	defer cancel()
	dc.ran = true
	env.Log("starting PostgreSQL in Docker (image %s)…", image)
	ctr, err := tcpostgres.Run(runCtx, image,
		tcpostgres.WithUsername(dockerUser),
		tcpostgres.WithPassword(password),
		tcpostgres.WithDatabase(dockerDB),
		testcontainers.WithName(dc.name),
		testcontainers.WithLabels(ownerLabels(dc.runID)),
		testcontainers.WithLogger(logs),
		// The same settings as the local cluster (the module sets
		// fsync=off): nothing here is worth an fsync, but
		// synchronous_commit stays on, so that an answered COMMIT
		// outlives a crashed backend; the scenarios open many
		// connections at once.
		testcontainers.WithCmdArgs("-c", "full_page_writes=off", "-c", env.MaxConnectionsSetting()),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			if d.local() {
				// Only this machine may reach the server.
				hc.PortBindings = network.PortMap{network.MustParsePort(pgPort): {{HostIP: netip.MustParseAddr("127.0.0.1")}}}
			}
		}),
		// The postgres module's readiness by log (the official image
		// starts a temporary server first, so "ready" comes twice), then
		// learn's own: SELECT 1 through the published port with the
		// password learn set, on the address learn bound it to (the
		// module's port check dials the library's host, which inside a
		// container is the gateway, not the loopback learn publishes on).
		// ctx ends the wait.
		testcontainers.WithWaitStrategyAndDeadline(readyTimeout, untilStopped{ctx: ctx, Strategy: wait.ForAll(
			wait.ForLog("database system is ready to accept connections").WithOccurrence(2),
			w,
		).WithDeadline(readyTimeout)}),
	)
	if ctr != nil {
		dc.ctr = ctr
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, runError(image, err, runCtx, dc)
	}

	cs := fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable",
		pgsql.KVQuote(w.host), w.port, dockerUser, password, dockerDB)
	cfg, err := pgx.ParseConfig(cs)
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = 5 * time.Second
	dc.health.Set(func(h *way.Health) { *h = way.Health{State: way.Up, Since: time.Now()} })
	wctx, stop := context.WithCancel(context.Background())
	dc.watchStop, dc.watchDone = stop, make(chan struct{})
	go dc.watch(wctx)
	inst = &way.Instance{
		ConnString: cs,
		Config:     cfg,
		Describe: fmt.Sprintf("PostgreSQL %s in Docker: container %s (image %s) at %s, %s",
			w.version, dc.name, image, net.JoinHostPort(w.host, w.port), d),
		Disposable: true,
		Health:     &dc.health,
		Close:      dc.close,
		Impl:       dc,
	}
	env.Log("PostgreSQL ready in %s", time.Since(env.Started).Round(time.Millisecond))
	return inst, nil
}

// untilStopped is a wait strategy that ends, with ctx's error, when ctx
// ends: testcontainers-go waits under the start's own context, which the
// caller's cancelling does not reach (see start).
type untilStopped struct {
	wait.Strategy
	ctx context.Context
}

func (u untilStopped) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(u.ctx, cancel)()
	err := u.Strategy.WaitUntilReady(ctx, target)
	if u.ctx.Err() != nil {
		return u.ctx.Err()
	}
	return err
}

// runError turns testcontainers-go's error into one that says what to do.
func runError(image string, err error, runCtx context.Context, dc *Container) error {
	tail := dc.logTail()
	msg := err.Error()
	cause := tcCause(msg)
	switch {
	case strings.Contains(msg, "reaper"):
		return fmt.Errorf("testcontainers' reaper (Ryuk) did not start, so no container was kept: %s; "+
			"set %s=true to do without it (learn removes its containers itself)", cause, ryukEnv)
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) || strings.Contains(msg, "did not accept") || strings.Contains(msg, "deadline exceeded"):
		if tail == "" {
			return fmt.Errorf("PostgreSQL in Docker (image %s) did not accept queries within %s: %s", image, readyTimeout, cause)
		}
		return fmt.Errorf("PostgreSQL in Docker (image %s) did not accept queries within %s; the container's log ends with:\n%s", image, readyTimeout, tail)
	}
	if tail != "" {
		return fmt.Errorf("could not start PostgreSQL in Docker (image %s): %s; the container's log ends with:\n%s", image, cause, tail)
	}
	return fmt.Errorf("could not start PostgreSQL in Docker (image %s): %s", image, cause)
}

// tcCause drops the steps testcontainers-go prefixes to an error ("run
// postgres: generic container: create container: …"), which say nothing to
// a person, keeping the cause.
func tcCause(msg string) string {
	for {
		rest := msg
		for _, p := range []string{"run postgres: ", "generic container: ", "create container: ", "start container: ",
			"reaper: ", "new reaper: ", "run container: ", "container create: ", "wait until ready: ", "started hook: ",
			"all strategies: ", "strategy: "} {
			rest = strings.TrimPrefix(rest, p)
		}
		if rest == msg {
			return msg
		}
		msg = rest
	}
}

// watch follows the container from the end of its start until close
// (ctx): a container that stops before close makes the server Gone, with
// its exit code and the end of its log. learn does not start a container
// again (Docker may publish its port anew); an error of the daemon's wait
// says nothing of the container, and ends the watch.
func (dc *Container) watch(ctx context.Context) {
	defer close(dc.watchDone)
	res := dc.daemon.cli.ContainerWait(ctx, dc.ID(), client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	var code int64
	select {
	case r := <-res.Result:
		code = r.StatusCode
	case <-res.Error:
		return
	case <-ctx.Done():
		return
	}
	if ctx.Err() != nil {
		return
	}
	log := dc.logTail()
	dc.health.Set(func(h *way.Health) {
		*h = way.Health{State: way.Gone, Exit: fmt.Sprintf("learn's PostgreSQL container %s stopped (exit code %d)", dc.name, code),
			Log: log, Err: errors.New("learn does not start a container again"), Since: time.Now()}
	})
}

// logTail returns the last lines the container wrote, or "".
func (dc *Container) logTail() (out string) {
	if dc.ctr == nil {
		return ""
	}
	defer func() { recover() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := dc.ctr.Logs(ctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	b := tailbuf.New(16 << 10)
	io.Copy(b, r)
	return b.Lines(15)
}

// close removes the container and its anonymous volumes (the data), then
// makes sure nothing labelled with this run remains, whatever
// testcontainers-go did. It is idempotent and needs no caller context.
func (dc *Container) close() error {
	dc.closeOnce.Do(func() {
		if dc.watchStop != nil {
			dc.watchStop()
			<-dc.watchDone
		}
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		if dc.ctr != nil {
			func() {
				defer func() { recover() }()
				// A throwaway database needs no clean shutdown: stop at
				// once, then remove it with its volume.
				dc.ctr.Terminate(ctx, testcontainers.StopTimeout(0))
			}()
		}
		var err error
		if dc.ran {
			// Whatever Terminate did (or, when Run failed before it
			// returned a container, whatever the daemon made): every
			// container of this run goes, with its volumes. Creating is
			// never cancelled by learn (see start), so once Run returned
			// the daemon has answered it.
			err = removeByLabel(ctx, dc.daemon.cli.Client, labelRun+"="+dc.runID)
		}
		if err != nil {
			dc.closeErr = fmt.Errorf("could not remove the PostgreSQL container %s: %w; remove it with `docker rm -f -v %s`", dc.name, err, dc.name)
		}
		dc.daemon.close()
	})
	return dc.closeErr
}

// queryWait is a wait strategy that is ready when the server answers
// SELECT 1 through the published port with the password learn set: not
// merely when a port is open or a line was logged (a proxy may accept
// connections before PostgreSQL does).
type queryWait struct {
	user, password, db string
	local              bool // connect through 127.0.0.1
	timeout            time.Duration

	host, port, version string // set once ready
}

func (w *queryWait) Timeout() *time.Duration { return &w.timeout }

// WaitUntilReady tries every 100 ms until the server answers, the
// container stops or ctx ends.
func (w *queryWait) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = w.try(ctx, target); last == nil {
			return nil
		}
		if st, err := target.State(ctx); err == nil && !st.Running {
			return fmt.Errorf("the container stopped (%s, exit code %d) before PostgreSQL accepted queries", st.Status, st.ExitCode)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("PostgreSQL did not accept queries within %s (last try: %v)", w.timeout, last)
		case <-tick.C:
		}
	}
}

// try connects through the port the daemon published and runs SELECT 1.
func (w *queryWait) try(ctx context.Context, target wait.StrategyTarget) error {
	host := "127.0.0.1"
	if !w.local {
		h, err := target.Host(ctx) // testcontainers-go's: DOCKER_HOST's host, the gateway from inside a container, …
		if err != nil {
			return err
		}
		host = h
	}
	p, err := target.MappedPort(ctx, pgPort)
	if err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable connect_timeout=2",
		pgsql.KVQuote(host), p.Num(), pgsql.KVQuote(w.user), pgsql.KVQuote(w.password), pgsql.KVQuote(w.db)))
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return err
	}
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version')").Scan(&w.version); err != nil {
		return err
	}
	w.host, w.port = host, strconv.Itoa(int(p.Num()))
	return nil
}

// ensureImage pulls the image unless the daemon has it, within
// pullTimeout, and says what to do when that fails.
func ensureImage(ctx context.Context, cli *client.Client, image string, logf func(string, ...any)) error {
	if _, err := cli.ImageInspect(ctx, image); err == nil {
		return nil
	} else if !cerrdefs.IsNotFound(err) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("could not look up the image %s: %v", image, err)
	}
	logf("pulling the image %s (only the first time)…", image)
	err := pull(ctx, cli, image, pullTimeout)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	hint := fmt.Sprintf("run `docker pull %s` yourself, or set %s to an image this daemon has", image, ImageEnv)
	if os.Getenv(ImageEnv) != "" {
		hint = fmt.Sprintf("check %s, or unset it for %s", ImageEnv, DefaultImage)
	}
	return fmt.Errorf("the image %s is not on this machine and could not be pulled: %v; %s", image, err, hint)
}

// pull pulls an image, reading the daemon's progress to the end (where a
// failure is reported).
func pull(ctx context.Context, cli *client.Client, image string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := cli.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer resp.Close()
	for msg, err := range resp.JSONMessages(ctx) {
		if err != nil {
			return err
		}
		if msg.Error != nil {
			return errors.New(msg.Error.Message)
		}
	}
	return nil
}

// tcLogger passes testcontainers-go's lines to Logf while Start runs,
// without their emoji, and drops them afterwards (Logf must not be called
// once Start has returned).
type tcLogger struct {
	mu   sync.Mutex
	logf func(string, ...any)
	done bool
}

func (l *tcLogger) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done || l.logf == nil {
		return
	}
	msg := strings.TrimLeftFunc(fmt.Sprintf(format, args...), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if i := strings.Index(msg, "Waiting for: "); i >= 0 {
		msg = msg[:i] // a Go struct dump follows
	}
	if msg = strings.TrimSpace(msg); msg != "" {
		l.logf("docker: %s", msg)
	}
}

func (l *tcLogger) stop() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}

// recoverDocker turns a panic inside the Docker client or testcontainers-go
// (it panics where it cannot reach a daemon it found before, for instance)
// into an error.
func recoverDocker(err *error) {
	if r := recover(); r != nil {
		*err = panicError(r)
	}
}

func panicError(r any) error {
	err := fmt.Errorf("the Docker client failed (%v) while starting PostgreSQL in Docker; "+
		"check that `docker info` works, or use another way (--postgres local or --database-url)", r)
	if os.Getenv("LEARN_DEBUG") != "" {
		err = fmt.Errorf("%w\n%s", err, debug.Stack())
	}
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
