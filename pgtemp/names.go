package pgtemp

import (
	"github.com/learn-idempotency/learn/pgtemp/docker"
	"github.com/learn-idempotency/learn/pgtemp/download"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// The names of the ways' settings, kept here for the rest of learn.

// DownloadProgress is where a download of PostgreSQL binaries stands.
type DownloadProgress = way.DownloadProgress

// The Docker way's image.
const (
	// DefaultDockerImage is the image the Docker way runs unless the
	// environment variable LEARN_POSTGRES_IMAGE names another.
	DefaultDockerImage = docker.DefaultImage
	// DockerImageEnv names the environment variable that replaces
	// DefaultDockerImage.
	DockerImageEnv = docker.ImageEnv
)

// ErrNoDocker is wrapped by the error of the Docker way (and of ReapDocker)
// when no Docker daemon answers.
var ErrNoDocker = docker.ErrNoDocker

// DockerImage returns the image the Docker way runs: $LEARN_POSTGRES_IMAGE,
// or DefaultDockerImage when that is unset or empty.
func DockerImage() string { return docker.Image() }

// The download way's repository and version.
const (
	// DefaultRepository is the Maven repository the download way fetches
	// from unless RepositoryEnv names another.
	DefaultRepository = download.DefaultRepository
	// RepositoryEnv names the environment variable that replaces
	// DefaultRepository: the base URL of a Maven repository (a mirror).
	RepositoryEnv = download.RepositoryEnv
	// DownloadVersion is the version of the zonky archive learn downloads.
	DownloadVersion = download.Version
)

// DownloadRepository returns the repository the download way fetches from:
// $LEARN_POSTGRES_REPOSITORY without a trailing slash, or DefaultRepository
// when that is unset or empty.
func DownloadRepository() string { return download.Repository() }
