package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
)

// Probing is what `learn doctor` does with each way: look at what this
// machine has for it, then actually start it, use it as learn would (a
// schema of its own, SELECT 1), stop it and check that nothing remains.

// Way is what Probe found out about one way of getting a PostgreSQL.
type Way struct {
	// Mode is the way: URL, Local, Docker or Download.
	Mode Mode
	// Title names the way for people, e.g. "local PostgreSQL binaries".
	Title string
	// Available says whether the way can be tried at all: a URL is set,
	// server binaries were found, a Docker daemon answers.
	Available bool
	// Missing is true when what the way needs is not here at all: no URL is
	// set, no usable server binaries were found, no Docker daemon answers.
	// Setting, installing or starting it is then the fix; when a way is
	// neither Missing nor working, what is here needs fixing instead (a
	// local way is also unavailable, but not Missing, when learn runs as
	// root and has no user to run PostgreSQL as).
	Missing bool
	// Details are lines for people about what learn found (binaries and
	// version, template cache, daemon, image, server address). They never
	// hold a password.
	Details []string
	// Err says why the way is not available, or why it did not work.
	Err error
	// Works is true when the way started, learn made and dropped a schema
	// in it and ran SELECT 1, and it was stopped and removed.
	Works bool
	// ReadyIn is how long the start took (Server.ReadyIn), when it started.
	ReadyIn time.Duration
	// Describe is Server.Describe of the server that started.
	Describe string
	// Cold is true when a local or download start had to run initdb (no
	// usable template was cached: the first run for this version and user).
	Cold bool
	// InitdbTook is how long initdb ran in a cold start.
	InitdbTook time.Duration
	// TemplateErr says why a cold start could not save the cluster
	// template (Server.TemplateError): nil when it saved it. While it is
	// not nil, every start runs initdb.
	TemplateErr error
}

// Titles of the ways, as the doctor and the no-PostgreSQL message name them.
const (
	TitleURL    = "database URL (--database-url / DATABASE_URL)"
	TitleLocal  = "local PostgreSQL binaries"
	TitleDocker = "Docker"
	// TitleDownload is the fourth way, the one that needs nothing installed.
	TitleDownload = "PostgreSQL downloaded once into the user cache directory"
)

// Probe looks at one way (URL, Local, Docker or Download) and, when it is available,
// starts it with opts (opts.Mode is ignored) within timeout, makes a schema,
// runs SELECT 1, drops the schema, and closes the server, so that nothing of
// it remains. It never panics; the error of each step is in Way.Err. A ctx
// that ends stops the probe (Way.Err is then ctx's error).
func Probe(ctx context.Context, mode Mode, opts Options, timeout time.Duration) (w Way) {
	w = Way{Mode: mode}
	defer func() {
		if r := recover(); r != nil {
			w.Works = false
			w.Err = fmt.Errorf("learn failed while checking this way (%v); please report it", r)
		}
	}()
	switch mode {
	case URL:
		w.Title = TitleURL
		inspectURL(&w, opts.DatabaseURL)
	case Local:
		w.Title = TitleLocal
		inspectLocal(ctx, &w, opts)
	case Docker:
		w.Title = TitleDocker
		inspectDocker(ctx, &w)
	case Download:
		w.Title = TitleDownload
		inspectDownload(&w, opts)
	default:
		w.Err = fmt.Errorf("Probe: %q is not one way (url, local, docker or download)", mode)
		return w
	}
	if !w.Available {
		return w
	}

	opts.Mode = mode
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := Start(tctx, opts)
	if err != nil {
		w.Err = err
		if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			w.Err = fmt.Errorf("did not start within %s: %w", timeout, err)
		}
		if mode == Download && !archiveCached(opts.cacheDir) {
			w.Missing = true // the download itself failed: the network or the repository is the fix
		}
		return w
	}
	w.ReadyIn, w.Describe, w.Cold = s.ReadyIn(), s.Describe(), s.RanInitdb()
	w.InitdbTook, w.TemplateErr = s.InitdbTook(), s.TemplateError()
	useErr := use(tctx, s)
	closeErr := s.Close()
	switch {
	case useErr != nil:
		w.Err = useErr
	case closeErr != nil:
		w.Err = fmt.Errorf("started, but did not stop cleanly: %w", closeErr)
	default:
		w.Works = true
	}
	return w
}

// use does what learn does with a server: a fresh schema, a query in it.
func use(ctx context.Context, s *Server) error {
	sc, err := s.NewSchema(ctx)
	if err != nil {
		return err
	}
	cfg, err := parseURL(sc.ConnString())
	var conn *pgx.Conn
	if err == nil {
		conn, err = pgx.ConnectConfig(ctx, cfg)
	}
	if err == nil {
		var one int
		err = conn.QueryRow(ctx, "SELECT 1").Scan(&one)
		conn.Close(context.Background())
	}
	if err != nil {
		sc.Drop(context.Background())
		return fmt.Errorf("started, but SELECT 1 in a schema of learn's failed: %w", err)
	}
	return sc.Drop(ctx)
}

func inspectURL(w *Way, url string) {
	if url == "" {
		w.Err = errors.New("not set")
		w.Missing = true
		return
	}
	w.Available = true
	cfg, err := parseURL(url)
	if err != nil {
		return // Start says what is wrong with it, without quoting it
	}
	w.Details = append(w.Details, fmt.Sprintf("server %s, database %s, user %s (the password is not shown)",
		address(cfg), cfg.Database, cfg.User))
}

func inspectLocal(ctx context.Context, w *Way, opts Options) {
	f := systemFinder(ctx, opts.cacheDir)
	if opts.finder != nil {
		f = *opts.finder
	}
	bin, err := findBinaries(ctx, f)
	if err != nil {
		w.Err = err
		w.Missing = errors.Is(err, errNoBinaries)
		return
	}
	w.Details = append(w.Details, fmt.Sprintf("PostgreSQL %s in %s", bin.version, bin.dir))
	run, err := currentRunner()
	if err != nil {
		w.Err = err
		return
	}
	w.Available = true
	if run.cred != nil {
		w.Details = append(w.Details, fmt.Sprintf("learn runs as root, so the cluster runs as %s", run))
	}
	switch tmpl := templatePath(opts.cacheDir, bin.major, run.uid); {
	case tmpl == "":
		w.Details = append(w.Details, "no user cache directory: every start runs initdb")
	case templateUsable(tmpl, bin.major):
		w.Details = append(w.Details, fmt.Sprintf("cluster template %s: warm (a start copies it)", tmpl))
	default:
		if why := templateDirProblem(filepath.Dir(tmpl)); why != "" {
			w.Details = append(w.Details, fmt.Sprintf("cluster template %s: cold, and learn cannot save one there (%s): every start runs initdb", tmpl, why))
		} else {
			w.Details = append(w.Details, fmt.Sprintf("cluster template %s: cold (the next start runs initdb and tries to save it there)", tmpl))
		}
	}
}

// inspectDownload says what the download way would fetch, from where, and
// what is cached. With opts.CacheOnly and nothing cached, the way is not
// tried (it would download).
func inspectDownload(w *Way, opts Options) {
	a, err := thisArchive(DownloadRepository())
	if err != nil {
		w.Err, w.Missing = err, true
		return
	}
	from := "Maven Central"
	if os.Getenv(RepositoryEnv) != "" {
		from = "from " + RepositoryEnv
	}
	w.Details = append(w.Details, fmt.Sprintf("%s from %s (%s)", a, a.url(), from))
	base, cached := downloadCache(opts.cacheDir)
	if base == "" {
		w.Err = errors.New("there is no user cache directory to keep PostgreSQL in: set XDG_CACHE_HOME, or HOME to a directory that exists")
		return
	}
	if len(cached) == 0 {
		w.Details = append(w.Details, "cached: nothing yet in "+base)
	}
	for _, c := range cached {
		state := "whole"
		if !c.Whole {
			state = "not whole, downloaded again on next use: " + c.Problem
		}
		w.Details = append(w.Details, fmt.Sprintf("cached: %s, %s (%s)", c.Dir, bytesText(c.Size), state))
	}
	if opts.CacheOnly && !archiveCached(opts.cacheDir) {
		w.Err = fmt.Errorf("not downloaded: learn downloads it into %s only when it would use it (no earlier way works, or --postgres download)", base)
		return
	}
	w.Available = true
}

// archiveCached reports whether this machine's archive is cached whole.
func archiveCached(cacheDir string) bool {
	a, err := thisArchive("")
	base := downloadsDir(cacheDir)
	if err != nil || base == "" {
		return false
	}
	_, err = verifyArchiveDir(filepath.Join(base, a.name()))
	return err == nil
}

func inspectDocker(ctx context.Context, w *Way) {
	d, err := findDockerDaemon(ctx)
	if err != nil {
		w.Err = err
		w.Missing = errors.Is(err, ErrNoDocker)
		return
	}
	defer d.cli.Close()
	w.Available = true
	w.Details = append(w.Details, "daemon: "+d.String())

	image, from := DockerImage(), "the default"
	if os.Getenv(DockerImageEnv) != "" {
		from = "from " + DockerImageEnv
	}
	if img, err := d.cli.ImageInspect(ctx, image); err == nil {
		w.Details = append(w.Details, fmt.Sprintf("image %s (%s): here, %d MB", image, from, img.Size/1_000_000))
	} else {
		w.Details = append(w.Details, fmt.Sprintf("image %s (%s): not here yet, learn pulls it on first use", image, from))
	}
	w.Details = append(w.Details, "cleanup: learn removes its containers and their volumes itself; those of a killed learn go at the next start (label "+labelApp+"=1)")
}

// ReapDocker removes the containers (and their volumes) of learn processes
// that were killed before they could remove them, never one whose learn
// process still runs or that another machine made, and lists every
// container of learn's it saw. logf, when not nil, gets one line per
// container removed. With no Docker daemon it returns an error wrapping
// ErrNoDocker and touches nothing. Each Docker start does the same first.
func ReapDocker(ctx context.Context, logf func(format string, args ...any)) ([]DockerLeftover, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	d, err := findDockerDaemon(ctx)
	if err != nil {
		return nil, err
	}
	defer d.cli.Close()
	return reapDocker(ctx, d.cli, logf)
}
