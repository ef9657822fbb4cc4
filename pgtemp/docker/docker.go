// Package docker is the Docker way: PostgreSQL in a container, started
// through testcontainers-go and its postgres module (the official image
// postgres:17-alpine, or the image LEARN_POSTGRES_IMAGE names), removed
// with its volume on Close.
//
//   - [Way] implements way.Way: Start finds a daemon, removes the
//     containers of killed learn processes, makes sure the image is here,
//     runs the container and waits until PostgreSQL answers; Inspect says
//     which daemon, which image, and who reaps.
//
//   - daemon.go: finding the daemon. testcontainers-go's own discovery
//     (tc.host and docker.host in ~/.testcontainers.properties,
//     DOCKER_HOST, the default socket, rootless and Docker Desktop
//     sockets), after learn has put the current Docker context (Colima's,
//     say) into DOCKER_HOST when that is unset, and checked a DOCKER_HOST
//     the user named, so that a dead one is said as such at once.
//
//   - reaper.go: whether testcontainers' reaper (Ryuk) runs: where its
//     image is here or can be pulled and the user did not turn it off.
//
//   - container.go: the container (the postgres module, its wait
//     strategies and one of learn's: SELECT 1 with the password learn
//     set), its watch until Close, and Close.
//
//   - reap.go: the owner labels every container carries, and the reaping
//     of the containers whose learn process is gone, Ryuk or not:
//
//     learn.pgtemp=1
//     learn.run=<random id of one Start>
//     learn.owner.pid=<pid of learn>
//     learn.owner.start=<start of that process, clock ticks after boot, where there is a /proc>
//     learn.owner.host=<host name>
//     learn.owner.boot=<boot id, where there is a /proc>
//
// testcontainers-go's discovery runs once per process (it keeps its
// answer), as its configuration is read once.
package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

const (
	// DefaultImage is the image the Docker way runs unless the
	// environment variable LEARN_POSTGRES_IMAGE names another.
	DefaultImage = "postgres:17-alpine"
	// ImageEnv names the environment variable that replaces DefaultImage.
	ImageEnv = "LEARN_POSTGRES_IMAGE"

	dockerUser = "learn"
	dockerDB   = "learn"

	pingTimeout  = 3 * time.Second
	pullTimeout  = 5 * time.Minute
	readyTimeout = time.Minute
	runTimeout   = 2 * time.Minute // create, start and wait, once the image is here
	closeTimeout = 30 * time.Second
)

// ErrNoDocker is wrapped by the error of the Docker way (and of Reap) when
// no Docker daemon answers.
var ErrNoDocker = errors.New("no Docker daemon learn can use")

// Image returns the image the Docker way runs: $LEARN_POSTGRES_IMAGE, or
// DefaultImage when that is unset or empty.
func Image() string {
	if img := strings.TrimSpace(os.Getenv(ImageEnv)); img != "" {
		return img
	}
	return DefaultImage
}

// Way is the Docker way.
type Way struct{}

var _ way.Way = Way{}

// Start finds a daemon, removes the containers of learn processes that are
// gone, makes sure the image is here (pulling it the first time), runs
// PostgreSQL in a container and waits until it answers SELECT 1 through the
// published port. Without a daemon its error wraps ErrNoDocker. On any
// failure, a panic inside the Docker client or testcontainers-go, or when
// ctx ends, the container and its volume are removed before it returns.
// The Instance's Impl is the *Container.
func (Way) Start(ctx context.Context, env *way.Env) (inst *way.Instance, err error) {
	defer recoverDocker(&err)
	return start(ctx, env)
}

// Inspect says which daemon answers, whether the image is here, and who
// removes the containers.
func (Way) Inspect(ctx context.Context, _ *way.Env) (in way.Inspection) {
	defer func() {
		if r := recover(); r != nil {
			in = way.Inspection{Err: panicError(r)}
		}
	}()
	d, err := findDaemon(ctx)
	if err != nil {
		in.Err = err
		in.Missing = errors.Is(err, ErrNoDocker)
		return in
	}
	defer d.close()
	in.Available = true
	in.Details = append(in.Details, "daemon: "+d.String())

	image, from := Image(), "the default"
	if os.Getenv(ImageEnv) != "" {
		from = "from " + ImageEnv
	}
	if img, err := d.cli.ImageInspect(ctx, image); err == nil {
		in.Details = append(in.Details, fmt.Sprintf("image %s (%s): here, %d MB", image, from, img.Size/1_000_000))
	} else {
		in.Details = append(in.Details, fmt.Sprintf("image %s (%s): not here yet, learn pulls it on first use", image, from))
	}
	in.Details = append(in.Details, reaperStatus()+"; learn removes its containers and their volumes itself, and those of a killed learn at the next start (label "+labelApp+"=1)")
	return in
}

// Reap removes the containers (and their volumes) of learn processes that
// were killed before they could remove them, never one whose learn process
// still runs or that another machine made, and lists every container of
// learn's it saw. logf, when not nil, gets one line per container removed.
// With no Docker daemon it returns an error wrapping ErrNoDocker and
// touches nothing. Each Docker start does the same first.
func Reap(ctx context.Context, logf func(format string, args ...any)) (left []Leftover, err error) {
	defer recoverDocker(&err)
	if logf == nil {
		logf = func(string, ...any) {}
	}
	d, err := findDaemon(ctx)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return reapContainers(ctx, d.cli.Client, logf)
}
