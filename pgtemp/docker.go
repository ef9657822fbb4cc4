package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/client"
)

// The Docker way runs PostgreSQL in a container (the official image, or one
// that behaves like it) through Docker's own client. Every container learn
// makes carries labels saying which
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
// Close removes the container and its volume itself, and the labels cover
// the rest: no reaper container is needed.
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

	dockerUser = "learn"
	dockerDB   = "learn"

	dockerPingTimeout  = 3 * time.Second
	dockerPullTimeout  = 5 * time.Minute
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
// testcontainers-go looks for them (Podman last).
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

// hostName is where a published port of this daemon is reached from
// here: the host of a tcp:// (or http[s]://) DOCKER_HOST; from inside a
// container that shares its host's socket, the container's default
// gateway (the Docker host on its bridge); else localhost.
func (d *dockerDaemon) hostName() string {
	if u, err := url.Parse(d.host); err == nil && u.Scheme != "unix" && u.Scheme != "npipe" && u.Hostname() != "" {
		return u.Hostname()
	}
	if _, err := os.Stat("/.dockerenv"); err == nil {
		if gw := defaultGateway(); gw != "" {
			return gw
		}
	}
	return "localhost"
}

// defaultGateway reads the IPv4 default route's gateway from
// /proc/net/route (Linux), or "".
func defaultGateway() string {
	b, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] != "00000000" {
			continue
		}
		gw, err := strconv.ParseUint(f[2], 16, 32)
		if err != nil || gw == 0 {
			continue
		}
		// The file holds the address in host (little-endian) byte order.
		return fmt.Sprintf("%d.%d.%d.%d", byte(gw), byte(gw>>8), byte(gw>>16), byte(gw>>24))
	}
	return ""
}
