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
	"syscall"
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

// The Docker way runs PostgreSQL in a container through testcontainers-go's
// postgres module. Every container learn makes carries labels saying which
// learn process made it, so that a later run can remove the container of a
// learn that was killed outright (SIGKILL, a crash, a power cut) without
// ever touching the container of a learn that still runs:
//
//	learn.pgtemp=1
//	learn.run=<random id of one Start>
//	learn.owner.pid=<pid of learn>
//	learn.owner.start=<start of that process, clock ticks after boot, where there is a /proc>
//	learn.owner.host=<host name>
//	learn.owner.boot=<boot id, where there is a /proc>
//
// testcontainers' reaper (Ryuk) is welcome when it runs, but learn never
// depends on it: Close removes the container and its volume itself, and the
// labels cover the rest.
const (
	// DefaultDockerImage is the image the Docker way runs unless the
	// environment variable LEARN_POSTGRES_IMAGE names another.
	DefaultDockerImage = "postgres:17-alpine"
	// DockerImageEnv names the environment variable that replaces
	// DefaultDockerImage.
	DockerImageEnv = "LEARN_POSTGRES_IMAGE"

	labelApp        = "learn.pgtemp"
	labelRun        = "learn.run"
	labelOwnerPID   = "learn.owner.pid"
	labelOwnerStart = "learn.owner.start"
	labelOwnerHost  = "learn.owner.host"
	labelOwnerBoot  = "learn.owner.boot"

	// ryukImage is the reaper testcontainers-go v0.45.0 starts (a test
	// checks that it still is).
	ryukImage = "testcontainers/ryuk:0.14.0"
	ryukEnv   = "TESTCONTAINERS_RYUK_DISABLED"

	dockerUser = "learn"
	dockerDB   = "learn"

	dockerPingTimeout  = 3 * time.Second
	dockerPullTimeout  = 5 * time.Minute
	ryukPullTimeout    = time.Minute
	dockerReadyTimeout = time.Minute
	dockerRunTimeout   = 2 * time.Minute // create, start and wait, once the image is here
	dockerCloseTimeout = 30 * time.Second
)

// ErrNoDocker is wrapped by the error of the Docker way (and of ReapDocker)
// when no Docker daemon answers.
var ErrNoDocker = errors.New("no Docker daemon learn can use")

// errDockerDenied is wrapped when learn may not open a daemon's socket.
var errDockerDenied = errors.New("permission denied")

// DockerImage returns the image the Docker way runs: $LEARN_POSTGRES_IMAGE,
// or DefaultDockerImage when that is unset or empty.
func DockerImage() string {
	if img := strings.TrimSpace(os.Getenv(DockerImageEnv)); img != "" {
		return img
	}
	return DefaultDockerImage
}

// dockerDaemon is a Docker (or Podman) daemon that answered a ping.
type dockerDaemon struct {
	host     string // e.g. unix:///var/run/docker.sock
	source   string // where learn found it, for people: "DOCKER_HOST", "the default socket", …
	version  string // e.g. "Docker 20.10.24" or "Podman Engine 5.0.0"
	api      string // the API version the client and daemon agreed on
	name     string // the daemon host's name (Info.Name)
	rootless bool
	cli      *client.Client
}

// dockerEndpoint is a place a daemon may listen.
type dockerEndpoint struct{ host, source string }

// dockerEndpoints lists where to look for a daemon, best first. DOCKER_HOST,
// when set, is the only place: a daemon the user named is used or reported,
// never silently replaced. Otherwise the sockets of Docker, rootless Docker,
// Docker Desktop and Podman that exist on this machine, in the order
// testcontainers-go looks for them (Podman last; it finds that one only
// through DOCKER_HOST).
func dockerEndpoints() []dockerEndpoint {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return []dockerEndpoint{{h, "DOCKER_HOST"}}
	}
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_RUNTIME_DIR")
	uidRun := fmt.Sprintf("/run/user/%d", os.Getuid())
	socks := []struct{ path, source string }{
		{"/var/run/docker.sock", "the default socket"},
		{filepath.Join(xdg, "docker.sock"), "rootless Docker"},
		{filepath.Join(home, ".docker", "run", "docker.sock"), "Docker Desktop"},
		{filepath.Join(home, ".docker", "desktop", "docker.sock"), "Docker Desktop"},
		{filepath.Join(uidRun, "docker.sock"), "rootless Docker"},
		{filepath.Join(xdg, "podman", "podman.sock"), "Podman"},
		{filepath.Join(uidRun, "podman", "podman.sock"), "Podman"},
		{"/run/podman/podman.sock", "Podman"},
	}
	var out []dockerEndpoint
	seen := map[string]bool{}
	for _, s := range socks {
		if !filepath.IsAbs(s.path) || seen[s.path] {
			continue // XDG_RUNTIME_DIR or the home directory unknown
		}
		seen[s.path] = true
		if fi, err := os.Stat(s.path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			out = append(out, dockerEndpoint{"unix://" + s.path, s.source})
		}
	}
	return out
}

// findDockerDaemon returns the first daemon that answers a ping within
// dockerPingTimeout, or an error wrapping ErrNoDocker that says what was
// tried and what to do. The caller closes the daemon's client.
func findDockerDaemon(ctx context.Context) (*dockerDaemon, error) {
	eps := dockerEndpoints()
	if len(eps) == 0 {
		return nil, fmt.Errorf("%w: DOCKER_HOST is not set and there is no Docker or Podman socket "+
			"(/var/run/docker.sock, $XDG_RUNTIME_DIR/docker.sock, ~/.docker/run/docker.sock); "+
			"install and start Docker, or set DOCKER_HOST", ErrNoDocker)
	}
	var problems []string
	allDenied := true
	for _, ep := range eps {
		d, err := pingDocker(ctx, ep)
		if err == nil {
			return d, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		problems = append(problems, err.Error())
		allDenied = allDenied && errors.Is(err, errDockerDenied)
	}
	if allDenied {
		return nil, fmt.Errorf("%w: %s", ErrNoDocker, strings.Join(problems, "; "))
	}
	hint := "start the Docker daemon (e.g. `sudo systemctl start docker`, or open Docker Desktop)"
	if os.Getenv("DOCKER_HOST") != "" {
		hint += ", or point DOCKER_HOST at a running one (or unset it)"
	}
	return nil, fmt.Errorf("%w: %s; %s", ErrNoDocker, strings.Join(problems, "; "), hint)
}

// pingDocker connects to one endpoint and asks the daemon who it is.
func pingDocker(ctx context.Context, ep dockerEndpoint) (*dockerDaemon, error) {
	cli, err := client.New(client.FromEnv, client.WithHost(ep.host))
	if err != nil {
		return nil, fmt.Errorf("%s (%s) is not a Docker address learn can use: %v", ep.host, ep.source, err)
	}
	ctx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
	defer cancel()
	ping, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
	if err == nil {
		var info client.SystemInfoResult
		info, err = cli.Info(ctx, client.InfoOptions{})
		if err == nil {
			d := &dockerDaemon{host: ep.host, source: ep.source, api: ping.APIVersion, name: info.Info.Name, cli: cli,
				version: "Docker " + info.Info.ServerVersion}
			for _, o := range info.Info.SecurityOptions {
				d.rootless = d.rootless || strings.Contains(o, "rootless")
			}
			if v, err := cli.ServerVersion(ctx, client.ServerVersionOptions{}); err == nil {
				for _, c := range v.Components {
					if strings.Contains(c.Name, "Podman") {
						d.version = c.Name + " " + c.Version
					}
				}
			}
			return d, nil
		}
	}
	cli.Close()
	return nil, daemonError(ep, err)
}

// daemonError says why a daemon did not answer, and for a socket learn may
// not open, what gives access.
func daemonError(ep dockerEndpoint, err error) error {
	where := "DOCKER_HOST=" + ep.host
	if ep.source != "DOCKER_HOST" {
		where = fmt.Sprintf("%s (%s)", strings.TrimPrefix(ep.host, "unix://"), ep.source)
	}
	switch {
	case errors.Is(err, syscall.EACCES) || errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "permission denied"):
		return fmt.Errorf("%s: %w; add your user to the docker group (`sudo usermod -aG docker $USER`, then log in again) or use rootless Docker", where, errDockerDenied)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: the daemon did not answer within %s", where, dockerPingTimeout)
	}
	msg := err.Error()
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		msg = opErr.Err.Error()
	}
	return fmt.Errorf("%s: nothing answers there (%s)", where, msg)
}

// local reports whether the daemon runs on this machine, in learn's own
// network namespace, so that a published port is reachable on loopback.
// Outside a container a Unix socket means that; inside one (a socket
// mounted from the host) only when the daemon's host name is learn's.
func (d *dockerDaemon) local() bool {
	if !strings.HasPrefix(d.host, "unix://") {
		return false
	}
	if _, err := os.Stat("/.dockerenv"); err != nil {
		return true
	}
	h, _ := os.Hostname()
	return h != "" && h == d.name
}

func (d *dockerDaemon) String() string {
	s := fmt.Sprintf("%s at %s (%s)", d.version, d.host, d.source)
	if d.rootless {
		s += ", rootless"
	}
	return s
}

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
		testcontainers.WithCmdArgs("-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=250"),
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

// removeByLabel force-removes every container (running or not) with the
// label, with its anonymous volumes.
func removeByLabel(ctx context.Context, cli *client.Client, label string) error {
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range list.Items {
		_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) && !strings.Contains(err.Error(), "is already in progress") {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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

// ownerLabels are the labels of a container this process makes in run runID.
func ownerLabels(runID string) map[string]string {
	l := map[string]string{
		labelApp:      "1",
		labelRun:      runID,
		labelOwnerPID: strconv.Itoa(os.Getpid()),
	}
	if t := startTicks(os.Getpid()); t != "" {
		l[labelOwnerStart] = t
	}
	if h, err := os.Hostname(); err == nil {
		l[labelOwnerHost] = h
	}
	if b := bootID(); b != "" {
		l[labelOwnerBoot] = b
	}
	return l
}

// ownerGone reports whether the learn process that made a container with
// these labels has ended (its pid no longer runs, or runs a process that
// started at another time, or the machine rebooted since), and why. A
// container made on another host, or whose labels cannot be read, is never
// taken for an orphan: learn cannot tell, so it leaves it alone.
func ownerGone(labels map[string]string) (bool, string) {
	host, _ := os.Hostname()
	if was := labels[labelOwnerHost]; host == "" || was != host {
		return false, fmt.Sprintf("made by learn on another machine (%q)", was)
	}
	pid, err := strconv.Atoi(labels[labelOwnerPID])
	if err != nil || pid <= 0 {
		return false, fmt.Sprintf("its label %s=%q names no process", labelOwnerPID, labels[labelOwnerPID])
	}
	o := owner{learnPID: pid, learnTicks: labels[labelOwnerStart], bootID: labels[labelOwnerBoot]}
	if gone, why := o.learnGone(); gone {
		return true, why
	}
	return false, fmt.Sprintf("learn pid %d still runs", pid)
}

// DockerLeftover is a container of learn's that reapDocker found.
type DockerLeftover struct {
	Name     string // the container's name, e.g. "learn-postgres-1a2b3c4d5e6f7a8b"
	OwnerPID string // the learn process that made it
	Why      string // why it counts as an orphan, or why it was left alone
	Removed  bool   // removed now, because that process is gone
	Err      error  // why removing it failed
}

func (l DockerLeftover) String() string {
	switch {
	case l.Err != nil:
		return fmt.Sprintf("could not remove container %s (%s): %v; remove it with `docker rm -f -v %s`", l.Name, l.Why, l.Err, l.Name)
	case l.Removed:
		return fmt.Sprintf("removed container %s: %s", l.Name, l.Why)
	}
	return fmt.Sprintf("left container %s alone: %s", l.Name, l.Why)
}

// reapDocker removes, with their volumes, the containers of learn processes
// that are gone (see ownerGone), and reports every container of learn's it
// saw.
func reapDocker(ctx context.Context, cli *client.Client, logf func(string, ...any)) ([]DockerLeftover, error) {
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", labelApp+"=1")})
	if err != nil {
		return nil, err
	}
	var out []DockerLeftover
	for _, c := range list.Items {
		name := c.ID[:min(12, len(c.ID))]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		gone, why := ownerGone(c.Labels)
		l := DockerLeftover{Name: name, OwnerPID: c.Labels[labelOwnerPID], Why: why}
		if gone {
			_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			if err != nil && !cerrdefs.IsNotFound(err) {
				l.Err = err
			} else {
				l.Removed = true
			}
			logf("%s", l)
		}
		out = append(out, l)
	}
	return out, nil
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
