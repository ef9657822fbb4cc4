package pgtemp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/jackc/pgx/v5"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/learn-idempotency/learn/internal/tailbuf"
)

// dockerContainer is a PostgreSQL container learn started.
type dockerContainer struct {
	daemon *dockerDaemon
	id     string // "" until the daemon created it
	runID  string
	name   string
	ran    bool // the daemon was asked to create the container

	// Once the start succeeded, watch follows the container until close
	// stops it (watchStop) and it has returned (watchDone).
	health    healthState
	watchStop context.CancelFunc
	watchDone chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// startDocker finds a daemon, removes the containers of learn processes that
// are gone, makes sure the image is here (pulling it the first time), runs
// PostgreSQL in a container and waits until it answers SELECT 1 through the
// published port. On any failure, or when ctx ends, the container and its
// volume are removed before it returns.
//
// It talks to the daemon through Docker's own client (moby/moby/client):
// create, start, inspect, logs and remove are all the Docker way needs, and
// a container library on top (testcontainers-go) cost every start of learn
// 5 to 7 ms of package initialisation and a fifth of its Docker code's
// size, for a container learn removes itself anyway.
func startDocker(ctx context.Context, opts *Options, t0 time.Time) (s *Server, err error) {
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
	if err := dc.run(runCtx, image, password, opts.maxConnections()); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, dockerRunError(image, err, runCtx, dc)
	}
	opts.logf("waiting for PostgreSQL in container %s…", dc.name)
	if err := w.waitUntilReady(runCtx, dc); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, dockerRunError(image, err, runCtx, dc)
	}

	cs := fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable",
		kvQuote(w.host), w.port, dockerUser, password, dockerDB)
	cfg, err := pgx.ParseConfig(cs)
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = 5 * time.Second
	dc.health.set(func(h *Health) { *h = Health{State: Up, Since: time.Now()} })
	wctx, stop := context.WithCancel(context.Background())
	dc.watchStop, dc.watchDone = stop, make(chan struct{})
	go dc.watch(wctx)
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

// pgPort is the server's port inside the container.
var pgPort = network.MustParsePort("5432/tcp")

// run creates and starts the container: the official image's variables
// for the user, password and database, the same settings as the local
// cluster (nothing here is worth an fsync, but synchronous_commit stays on,
// so that an answered COMMIT outlives a crashed backend; the scenarios open many
// connections at once: maxConnections is its max_connections setting),
// the owner labels, and the server's port published
// on a free port, on 127.0.0.1 only when the daemon is on this machine.
func (dc *dockerContainer) run(ctx context.Context, image, password, maxConnections string) error {
	binding := network.PortBinding{}
	if dc.daemon.local() {
		// Only this machine may reach the server.
		binding.HostIP = netip.MustParseAddr("127.0.0.1")
	}
	created, err := dc.daemon.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: dc.name,
		Config: &container.Config{
			Image: image,
			Env:   []string{"POSTGRES_USER=" + dockerUser, "POSTGRES_PASSWORD=" + password, "POSTGRES_DB=" + dockerDB},
			Cmd: []string{"postgres", "-c", "fsync=off", "-c", "full_page_writes=off",
				"-c", maxConnections},
			Labels:       ownerLabels(dc.runID),
			ExposedPorts: network.PortSet{pgPort: struct{}{}},
		},
		HostConfig: &container.HostConfig{PortBindings: network.PortMap{pgPort: {binding}}},
	})
	if err != nil {
		return fmt.Errorf("create container: %w", err)
	}
	dc.id = created.ID
	if _, err := dc.daemon.cli.ContainerStart(ctx, dc.id, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("start container: %w", err)
	}
	return nil
}

// dockerRunError turns the daemon's error into one that says what to do.
func dockerRunError(image string, err error, runCtx context.Context, dc *dockerContainer) error {
	tail := dc.logTail()
	cause := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "create container: "), "start container: ")
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) || strings.Contains(cause, "did not accept") {
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

// watch follows the container from the end of its start until close
// (ctx): a container that stops before close makes the server Gone, with
// its exit code and the end of its log. learn does not start a container
// again (Docker may publish its port anew); an error of the daemon's wait
// says nothing of the container, and ends the watch.
func (dc *dockerContainer) watch(ctx context.Context) {
	defer close(dc.watchDone)
	res := dc.daemon.cli.ContainerWait(ctx, dc.id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
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
	dc.health.set(func(h *Health) {
		*h = Health{State: Gone, Exit: fmt.Sprintf("learn's PostgreSQL container %s stopped (exit code %d)", dc.name, code),
			Log: log, Err: errors.New("learn does not start a container again"), Since: time.Now()}
	})
}

// logTail returns the last lines the container wrote, or "".
func (dc *dockerContainer) logTail() string {
	if dc.id == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := dc.daemon.cli.ContainerLogs(ctx, dc.id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: "50"})
	if err != nil {
		return ""
	}
	defer r.Close()
	b := tailbuf.New(16 << 10)
	// The log comes multiplexed (a header per chunk) unless the container
	// has a terminal, which learn's never has.
	if _, err := stdcopy.StdCopy(b, b, r); err != nil {
		return ""
	}
	return b.Lines(15)
}

// close removes the container and its anonymous volumes (the data), then
// makes sure nothing labelled with this run remains. It is idempotent and
// needs no caller context.
func (dc *dockerContainer) close() error {
	dc.closeOnce.Do(func() {
		if dc.watchStop != nil {
			dc.watchStop()
			<-dc.watchDone
		}
		ctx, cancel := context.WithTimeout(context.Background(), dockerCloseTimeout)
		defer cancel()
		var err error
		if dc.id != "" {
			// A throwaway database needs no clean shutdown: remove it at
			// once, with its volume.
			_, err = dc.daemon.cli.ContainerRemove(ctx, dc.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			if cerrdefs.IsNotFound(err) || (err != nil && strings.Contains(err.Error(), "is already in progress")) {
				err = nil
			}
		}
		if err == nil {
			err = removeByLabel(ctx, dc.daemon.cli, labelRun+"="+dc.runID)
		}
		if err == nil && dc.ran && dc.id == "" {
			// Create failed without an id to show: a container may still
			// be on its way in the daemon.
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

// waitUntilReady tries every 100 ms until the server answers, the
// container stops, the timeout passes or w.stop ends.
func (w *queryWait) waitUntilReady(ctx context.Context, dc *dockerContainer) error {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	var last error
	for {
		ins, err := dc.daemon.cli.ContainerInspect(ctx, dc.id, client.ContainerInspectOptions{})
		if err == nil {
			st := ins.Container.State
			if st != nil && !st.Running {
				return fmt.Errorf("the container stopped (%s, exit code %d) before PostgreSQL accepted queries", st.Status, st.ExitCode)
			}
			if last = w.try(ctx, dc.daemon, ins.Container); last == nil {
				return nil
			}
		} else {
			last = err
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

// try connects through the port the daemon published and runs SELECT 1.
func (w *queryWait) try(ctx context.Context, d *dockerDaemon, ctr container.InspectResponse) error {
	var hostPort string
	if ctr.NetworkSettings != nil {
		for _, b := range ctr.NetworkSettings.Ports[pgPort] {
			if b.HostPort != "" {
				hostPort = b.HostPort
				break
			}
		}
	}
	if hostPort == "" {
		return errors.New("the daemon has not published the port yet")
	}
	host := "127.0.0.1"
	if !w.local {
		host = d.hostName()
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable connect_timeout=2",
		kvQuote(host), hostPort, kvQuote(w.user), kvQuote(w.password), kvQuote(w.db)))
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
	w.host, w.port = host, hostPort
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
