package docker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

const (
	// ryukEnv turns testcontainers' reaper off (read once per process).
	ryukEnv = "TESTCONTAINERS_RYUK_DISABLED"
	// ryukPullTimeout bounds the pull of the reaper's image.
	ryukPullTimeout = time.Minute
)

// ryukImage is the reaper testcontainers-go starts (a test checks that it
// still is).
//
//lint:ignore SA1019 the deprecated variable is the only public name of the reaper image
var ryukImage = testcontainers.ReaperDefaultImage

var (
	reaperOnce sync.Once
	reaperLine string // what chooseReaper decided, for people
)

// chooseReaper decides, once per process and before testcontainers-go
// reads its configuration (which it does once), whether its reaper (Ryuk)
// runs: as the user said (TESTCONTAINERS_RYUK_DISABLED, ryuk.disabled in
// ~/.testcontainers.properties, or an image prefix of their own); else on
// when the daemon at DOCKER_HOST (or the default socket) has the reaper's
// image or can pull it, and off otherwise (no registry, as in CI; no
// daemon to ask): learn removes its containers itself (Close, and the owner
// labels for a learn that was killed), so the reaper is a second net,
// never the only one.
func chooseReaper(ctx context.Context) {
	reaperOnce.Do(func() { reaperLine = decideReaper(ctx) })
}

func decideReaper(ctx context.Context) string {
	if v, ok := os.LookupEnv(ryukEnv); ok {
		if v == "true" {
			return "testcontainers' reaper (Ryuk) is off (" + ryukEnv + "=true)"
		}
		return "testcontainers' reaper (Ryuk) is on (" + ryukEnv + "=" + v + ")"
	}
	if os.Getenv("TESTCONTAINERS_HUB_IMAGE_NAME_PREFIX") != "" || ryukInProperties() {
		return "testcontainers' reaper (Ryuk) as ~/.testcontainers.properties or the hub prefix say"
	}
	off := func(why string) string {
		os.Setenv(ryukEnv, "true")
		return "testcontainers' reaper (Ryuk) is off: " + why
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return off("learn could not ask the daemon for its image " + ryukImage)
	}
	defer cli.Close()
	ictx, cancel := context.WithTimeout(ctx, pingTimeout)
	_, err = cli.ImageInspect(ictx, ryukImage)
	cancel()
	switch {
	case err == nil:
		return "testcontainers' reaper (Ryuk) is on (image " + ryukImage + " is here)"
	case !cerrdefs.IsNotFound(err):
		return off("learn could not ask the daemon for its image " + ryukImage)
	}
	if err := pull(ctx, cli, ryukImage, ryukPullTimeout); err != nil {
		return off("its image " + ryukImage + " could not be pulled (" + oneLine(err.Error()) + ")")
	}
	return "testcontainers' reaper (Ryuk) is on (image " + ryukImage + " pulled)"
}

// reaperStatus says what chooseReaper decided, or would.
func reaperStatus() string {
	if reaperLine != "" {
		return reaperLine
	}
	if os.Getenv(ryukEnv) == "true" {
		return "testcontainers' reaper (Ryuk) is off (" + ryukEnv + "=true)"
	}
	return "testcontainers' reaper (Ryuk): on where its image " + ryukImage + " is here or can be pulled"
}

// ryukInProperties reports whether ~/.testcontainers.properties says
// anything about the reaper.
func ryukInProperties() bool {
	home, err := os.UserHomeDir()
	if err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(home, ".testcontainers.properties"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, _, ok := strings.Cut(line, "="); ok && strings.HasPrefix(strings.TrimSpace(k), "ryuk.") {
			return true
		}
	}
	return false
}
