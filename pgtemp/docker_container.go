package pgtemp

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
	"path/filepath"
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
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"
)

// dockerContainer is a PostgreSQL container learn started.
type dockerContainer struct {
	daemon *dockerDaemon
	ctr    *tcpostgres.PostgresContainer // nil when Run returned none
	runID  string
	name   string
	ran    bool // testcontainers-go was asked to create the container

	closeOnce sync.Once
	closeErr  error
}

// startDocker finds a daemon, removes the containers of learn processes that
// are gone, makes sure the image is here (pulling it the first time), runs
// PostgreSQL in a container and waits until it answers SELECT 1 through the
// published port. On any failure, a panic inside testcontainers-go, or when
// ctx ends, the container and its volume are removed before it returns.
func startDocker(ctx context.Context, opts *Options, t0 time.Time) (s *Server, err error) {
	logs := &tcLogger{logf: opts.logf}
	defer logs.stop()
	defer recoverDocker(&err)
	quietTestcontainers()

	opts.logf("looking for a Docker daemon…")
	d, err := findDockerDaemon(ctx)
	if err != nil {
		return nil, err
	}
	dc := &dockerContainer{daemon: d, runID: randomHex(8)}
	dc.name = "learn-postgres-" + dc.runID
	defer func() {
		if r := recover(); r != nil {
			err = panicError(r)
		}
		if err != nil {
			dc.close()
		}
	}()
	opts.logf("using %s", d)
	if _, err := reapDocker(ctx, d.cli, opts.logf); err != nil && ctx.Err() == nil {
		opts.logf("could not look for containers of earlier learn runs: %v", err)
	}

	image := DockerImage()
	if err := ensureImage(ctx, d.cli, image, opts.logf); err != nil {
		return nil, err
	}
	chooseReaper(ctx, d.cli, opts.logf)
	if d.source != "DOCKER_HOST" && d.host != "unix:///var/run/docker.sock" {
		// testcontainers-go must talk to the daemon learn found: it finds
		// the default and rootless sockets itself, Podman's only this way.
		os.Setenv("DOCKER_HOST", d.host)
	}

	password := randomHex(16)
	w := &queryWait{user: dockerUser, password: password, db: dockerDB, local: d.local(), timeout: dockerReadyTimeout, stop: ctx}
	// Creating and starting the container is not cancelled with ctx: a
	// daemon goes on creating a container whose client hung up, after
	// learn could look for it. ctx ends the wait instead (queryWait.stop),
	// and the container, known by then, is removed.
	runCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dockerRunTimeout)
	defer cancel()
	dc.ran = true
	opts.logf("starting PostgreSQL in Docker (image %s)…", image)
	ctr, err := tcpostgres.Run(runCtx, image,
		tcpostgres.WithUsername(dockerUser),
		tcpostgres.WithPassword(password),
		tcpostgres.WithDatabase(dockerDB),
		testcontainers.WithName(dc.name),
		testcontainers.WithLabels(ownerLabels(dc.runID)),
		testcontainers.WithLogger(logs),
		// The same settings as the local cluster: nothing here is worth
		// an fsync, and the scenarios open many connections at once.
		testcontainers.WithCmdArgs("-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", opts.maxConnections()),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			if d.local() {
				// Only this machine may reach the server.
				hc.PortBindings = network.PortMap{network.MustParsePort("5432/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1")}}}
			}
		}),
		testcontainers.WithWaitStrategyAndDeadline(dockerReadyTimeout, w),
	)
	if ctr != nil {
		dc.ctr = ctr
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, dockerRunError(image, err, runCtx, dc)
	}

	cs := fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable",
		kvQuote(w.host), w.port, dockerUser, password, dockerDB)
	cfg, err := pgx.ParseConfig(cs)
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = 5 * time.Second
	s = &Server{
		mode:       Docker,
		connString: cs,
		cfg:        cfg,
		readyIn:    time.Since(t0),
		docker:     dc,
		describe: fmt.Sprintf("PostgreSQL %s in Docker: container %s (image %s) at %s, %s",
			w.version, dc.name, image, net.JoinHostPort(w.host, w.port), d),
	}
	opts.logf("PostgreSQL ready in %s", s.readyIn.Round(time.Millisecond))
	return s, nil
}

// dockerRunError turns testcontainers-go's error into one that says what to do.
func dockerRunError(image string, err error, runCtx context.Context, dc *dockerContainer) error {
	tail := dc.logTail()
	msg := err.Error()
	cause := tcCause(msg)
	switch {
	case strings.Contains(msg, "reaper"):
		return fmt.Errorf("testcontainers' reaper (Ryuk) did not start, so no container was kept: %s; "+
			"set %s=true to do without it (learn removes its containers itself)", cause, ryukEnv)
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) || strings.Contains(msg, "did not accept"):
		if tail == "" {
			return fmt.Errorf("PostgreSQL in Docker (image %s) did not accept queries within %s: %v", image, dockerRunTimeout, err)
		}
		return fmt.Errorf("PostgreSQL in Docker (image %s) did not accept queries within %s; the container's log ends with:\n%s", image, dockerRunTimeout, tail)
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
			"reaper: ", "new reaper: ", "run container: ", "container create: ", "wait until ready: ", "started hook: "} {
			rest = strings.TrimPrefix(rest, p)
		}
		if rest == msg {
			return msg
		}
		msg = rest
	}
}

// logTail returns the last lines the container wrote, or "".
func (dc *dockerContainer) logTail() string {
	if dc.ctr == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out string
	func() {
		defer func() { recover() }()
		r, err := dc.ctr.Logs(ctx)
		if err != nil {
			return
		}
		defer r.Close()
		b := newTailBuffer(16 << 10)
		io.Copy(b, r)
		out = b.Tail(15)
	}()
	return out
}

// close removes the container and its anonymous volumes (the data), then
// makes sure nothing labelled with this run remains, whatever testcontainers
// did. It is idempotent and needs no caller context.
func (dc *dockerContainer) close() error {
	dc.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dockerCloseTimeout)
		defer cancel()
		if dc.ctr != nil {
			func() {
				defer func() { recover() }()
				// A throwaway database needs no clean shutdown: stop
				// at once, then remove it with its volume.
				dc.ctr.Terminate(ctx, testcontainers.StopTimeout(0))
			}()
		}
		err := removeByLabel(ctx, dc.daemon.cli, labelRun+"="+dc.runID)
		if err == nil && dc.ran && dc.ctr == nil {
			// Run failed without a container to show: one may still be
			// on its way in the daemon.
			time.Sleep(time.Second)
			err = removeByLabel(ctx, dc.daemon.cli, labelRun+"="+dc.runID)
		}
		if err != nil {
			dc.closeErr = fmt.Errorf("could not remove the PostgreSQL container %s: %w; remove it with `docker rm -f -v %s`", dc.name, err, dc.name)
		}
		dc.daemon.cli.Close()
	})
	return dc.closeErr
}

// queryWait is ready when the server answers SELECT 1 through the published
// port with the password learn set: not merely when a port is open or a line
// was logged (the official image starts a temporary server first, and a
// proxy may accept connections before PostgreSQL does).
type queryWait struct {
	user, password, db string
	local              bool // connect through 127.0.0.1
	timeout            time.Duration
	stop               context.Context // the caller's: its end ends the wait

	host, port, version string // set once ready
}

func (w *queryWait) Timeout() *time.Duration { return &w.timeout }

func (w *queryWait) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	var last error
	for {
		if err := w.try(ctx, target); err == nil {
			return nil
		} else {
			last = err
		}
		if st, err := target.State(ctx); err == nil && !st.Running {
			return fmt.Errorf("the container stopped (%s, exit code %d) before PostgreSQL accepted queries", st.Status, st.ExitCode)
		}
		select {
		case <-w.stop.Done():
			return w.stop.Err()
		case <-ctx.Done():
			return fmt.Errorf("PostgreSQL did not accept queries within %s (last try: %v)", w.timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (w *queryWait) try(ctx context.Context, target wait.StrategyTarget) error {
	host := "127.0.0.1"
	if !w.local {
		h, err := target.Host(ctx)
		if err != nil {
			return err
		}
		host = h
	}
	p, err := target.MappedPort(ctx, "5432/tcp")
	if err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable connect_timeout=2",
		kvQuote(host), p.Num(), kvQuote(w.user), kvQuote(w.password), kvQuote(w.db)))
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
// dockerPullTimeout, and says what to do when that fails.
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
	err := pull(ctx, cli, image, dockerPullTimeout)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	hint := fmt.Sprintf("run `docker pull %s` yourself, or set %s to an image this daemon has", image, DockerImageEnv)
	if os.Getenv(DockerImageEnv) != "" {
		hint = fmt.Sprintf("check %s, or unset it for %s", DockerImageEnv, DefaultDockerImage)
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

// chooseReaper keeps testcontainers' reaper (Ryuk) when the user said
// nothing about it and its image is here or can be pulled; otherwise it
// turns it off for this process (TESTCONTAINERS_RYUK_DISABLED=true, read by
// testcontainers-go on first use) and says so: learn's own cleanup does not
// need it. It returns a line for people.
func chooseReaper(ctx context.Context, cli *client.Client, logf func(string, ...any)) string {
	if v, ok := os.LookupEnv(ryukEnv); ok {
		if v == "true" {
			return "testcontainers' reaper (Ryuk) is off (" + ryukEnv + "=true); learn removes its containers itself"
		}
		return "testcontainers' reaper (Ryuk) is on (" + ryukEnv + "=" + v + ")"
	}
	if os.Getenv("TESTCONTAINERS_HUB_IMAGE_NAME_PREFIX") != "" || ryukDisabledInProperties() {
		return "testcontainers' reaper (Ryuk) as ~/.testcontainers.properties or the hub prefix say"
	}
	if _, err := cli.ImageInspect(ctx, ryukImage); err == nil {
		return "testcontainers' reaper (Ryuk) is on (image " + ryukImage + " is here)"
	}
	logf("pulling testcontainers' reaper image %s…", ryukImage)
	err := pull(ctx, cli, ryukImage, ryukPullTimeout)
	if err == nil {
		return "testcontainers' reaper (Ryuk) is on (image " + ryukImage + " pulled)"
	}
	os.Setenv(ryukEnv, "true")
	logf("testcontainers' reaper image %s could not be pulled (%v); going without it: learn removes its containers itself", ryukImage, err)
	return "testcontainers' reaper (Ryuk) is off: its image " + ryukImage + " could not be pulled; learn removes its containers itself"
}

// ryukDisabledInProperties reports whether ~/.testcontainers.properties
// turns the reaper off.
func ryukDisabledInProperties() bool {
	home, err := os.UserHomeDir()
	if err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(home, ".testcontainers.properties"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == "ryuk.disabled" && strings.TrimSpace(v) == "true" {
			return true
		}
	}
	return false
}

// tcLogger passes testcontainers-go's lines to Options.Logf while Start runs,
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
	msg = strings.TrimSpace(msg)
	if msg != "" {
		l.logf("docker: %s", msg)
	}
}

func (l *tcLogger) stop() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}

var quietOnce sync.Once

// quietTestcontainers sends testcontainers-go's default logger, which
// writes to stderr and which parts of it use instead of the request's
// logger, nowhere: what matters reaches Options.Logf through tcLogger.
func quietTestcontainers() {
	quietOnce.Do(func() { tclog.SetDefault(tclog.NewNoopLogger()) })
}

// recoverDocker turns a panic inside testcontainers-go (it panics where it
// cannot reach a daemon it found before, for instance) into an error.
func recoverDocker(err *error) {
	if r := recover(); r != nil {
		*err = panicError(r)
	}
}

func panicError(r any) error {
	err := fmt.Errorf("testcontainers-go failed (%v) while starting PostgreSQL in Docker; "+
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
