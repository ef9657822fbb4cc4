package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// daemon is a Docker (or Podman) daemon that answered, through the client
// testcontainers-go made for it.
type daemon struct {
	cli      *testcontainers.DockerClient
	host     string // e.g. unix:///var/run/docker.sock
	source   string // where it was found, for people: "DOCKER_HOST", "testcontainers-go's discovery", …
	version  string // e.g. "Docker 20.10.24" or "Podman Engine 5.0.0"
	name     string // the daemon host's name (Info.Name)
	rootless bool
}

// errDenied is wrapped when learn may not open a daemon's socket.
var errDenied = errors.New("permission denied")

// findDaemon returns the daemon testcontainers-go finds (see the package
// doc), once it answered within pingTimeout, or an error wrapping
// ErrNoDocker that says what was tried and what to do. A DOCKER_HOST the
// user set is the only daemon: it is used or reported, never silently
// replaced. The caller closes the daemon.
func findDaemon(ctx context.Context) (*daemon, error) {
	quietTestcontainers()
	source := useDockerContext()
	chooseReaper(ctx) // before testcontainers-go reads its configuration
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		if err := pingHost(ctx, h); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, noDaemon(daemonError(h, source, err))
		}
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(pctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, noDaemon(discoveryError(err))
	}
	d := &daemon{cli: cli, host: cli.DaemonHost(), source: source}
	if d.source == "" {
		d.source = "found by testcontainers-go"
	}
	info, err := cli.Info(pctx, client.InfoOptions{})
	if err != nil {
		cli.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, noDaemon(daemonError(d.host, d.source, err))
	}
	d.name, d.version = info.Info.Name, "Docker "+info.Info.ServerVersion
	for _, o := range info.Info.SecurityOptions {
		d.rootless = d.rootless || strings.Contains(o, "rootless")
	}
	if v, err := cli.ServerVersion(pctx, client.ServerVersionOptions{}); err == nil {
		for _, c := range v.Components {
			if strings.Contains(c.Name, "Podman") {
				d.version = c.Name + " " + c.Version
			}
		}
	}
	return d, nil
}

func (d *daemon) close() { d.cli.Close() }

// noDaemon wraps why no daemon answers in ErrNoDocker, with what to do.
func noDaemon(err error) error {
	if errors.Is(err, errDenied) {
		return fmt.Errorf("%w: %v", ErrNoDocker, err)
	}
	hint := "start the Docker daemon (e.g. `sudo systemctl start docker`, or open Docker Desktop or `colima start`)"
	if os.Getenv("DOCKER_HOST") != "" {
		hint += ", or point DOCKER_HOST at a running one (or unset it)"
	} else {
		hint += ", or set DOCKER_HOST"
	}
	return fmt.Errorf("%w: %v; %s", ErrNoDocker, err, hint)
}

// pingHost asks the daemon at host whether it answers, within pingTimeout.
func pingHost(ctx context.Context, host string) error {
	cli, err := client.New(client.FromEnv, client.WithHost(host))
	if err != nil {
		return fmt.Errorf("not a Docker address learn can use: %w", err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	_, err = cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
	return err
}

// discoveryError says why testcontainers-go's discovery found no daemon:
// no socket anywhere it looks, or sockets where nothing answers.
func discoveryError(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "socket not found") || strings.Contains(msg, "rootless Docker not found") {
		return errors.New("DOCKER_HOST is not set, ~/.testcontainers.properties names no host, and there is no Docker socket " +
			"(/var/run/docker.sock, $XDG_RUNTIME_DIR/docker.sock, ~/.docker/run/docker.sock, ~/.docker/desktop/docker.sock, /run/user/<uid>/docker.sock)")
	}
	if errors.Is(err, syscall.EACCES) || errors.Is(err, os.ErrPermission) || strings.Contains(msg, "permission denied") {
		return fmt.Errorf("%s: %w; add your user to the docker group (`sudo usermod -aG docker $USER`, then log in again) or use rootless Docker", oneLine(msg), errDenied)
	}
	return errors.New(oneLine(msg))
}

// daemonError says why the daemon at host did not answer, and for a
// socket learn may not open, what gives access.
func daemonError(host, source string, err error) error {
	where := "DOCKER_HOST=" + host
	if source != "DOCKER_HOST" {
		where = fmt.Sprintf("%s (%s)", strings.TrimPrefix(host, "unix://"), source)
	}
	switch {
	case errors.Is(err, syscall.EACCES) || errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "permission denied"):
		return fmt.Errorf("%s: %w; add your user to the docker group (`sudo usermod -aG docker $USER`, then log in again) or use rootless Docker", where, errDenied)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: the daemon did not answer within %s", where, pingTimeout)
	}
	msg := err.Error()
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		msg = opErr.Err.Error()
	}
	return fmt.Errorf("%s: nothing answers there (%s)", where, msg)
}

// oneLine joins the lines of an error that joins several.
func oneLine(msg string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
}

// useDockerContext sets DOCKER_HOST, when it is unset, to the endpoint of
// the Docker CLI's current context (DOCKER_CONTEXT, else currentContext in
// ~/.docker/config.json) unless that is the default context: the way
// `docker` itself finds Colima, a remote host or Docker Desktop's own
// context, which testcontainers-go does not read. It returns where
// DOCKER_HOST came from ("DOCKER_HOST", "the Docker context NAME"), or ""
// when it is unset.
func useDockerContext() string {
	contextOnce.Do(func() {
		if os.Getenv("DOCKER_HOST") != "" {
			return
		}
		if name, host := dockerContext(); host != "" {
			os.Setenv("DOCKER_HOST", host)
			contextHost, contextSource = host, "the Docker context "+name
		}
	})
	switch h := os.Getenv("DOCKER_HOST"); {
	case h == "":
		return ""
	case h == contextHost:
		return contextSource
	}
	return "DOCKER_HOST"
}

var (
	contextOnce                sync.Once
	contextHost, contextSource string
)

// dockerContext returns the current Docker context and its endpoint, or
// "" when it is the default one or cannot be read.
func dockerContext() (name, host string) {
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", ""
		}
		dir = filepath.Join(home, ".docker")
	}
	name = os.Getenv("DOCKER_CONTEXT")
	if name == "" {
		var cfg struct {
			CurrentContext string `json:"currentContext"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err != nil || json.Unmarshal(b, &cfg) != nil {
			return "", ""
		}
		name = cfg.CurrentContext
	}
	if name == "" || name == "default" {
		return "", ""
	}
	// The CLI keeps a context's endpoints under the SHA-256 of its name.
	sum := sha256.Sum256([]byte(name))
	b, err := os.ReadFile(filepath.Join(dir, "contexts", "meta", hex.EncodeToString(sum[:]), "meta.json"))
	if err != nil {
		return "", ""
	}
	var meta struct {
		Endpoints map[string]struct {
			Host string `json:"Host"`
		} `json:"Endpoints"`
	}
	if json.Unmarshal(b, &meta) != nil {
		return "", ""
	}
	return name, meta.Endpoints["docker"].Host
}

// local reports whether the daemon runs on this machine, in learn's own
// network namespace, so that a published port is reachable on loopback.
// Outside a container a Unix socket means that; inside one (a socket
// mounted from the host) only when the daemon's host name is learn's.
func (d *daemon) local() bool {
	if !strings.HasPrefix(d.host, "unix://") {
		return false
	}
	if _, err := os.Stat("/.dockerenv"); err != nil {
		return true
	}
	h, _ := os.Hostname()
	return h != "" && h == d.name
}

func (d *daemon) String() string {
	s := fmt.Sprintf("%s at %s (%s)", d.version, d.host, d.source)
	if d.rootless {
		s += ", rootless"
	}
	return s
}

var quietOnce sync.Once

// quietTestcontainers sends testcontainers-go's default logger, which
// writes to stderr (the daemon's description, each step), nowhere: the
// lines of a start reach Logf through tcLogger.
func quietTestcontainers() {
	quietOnce.Do(func() { tclog.SetDefault(tclog.NewNoopLogger()) })
}
