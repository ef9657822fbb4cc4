package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/sim/pgtemp"
)

// How long the doctor gives each way to start. Docker's includes pulling
// the image the first time.
var doctorTimeouts = map[pgtemp.Mode]time.Duration{
	pgtemp.URL:    30 * time.Second,
	pgtemp.Local:  90 * time.Second,
	pgtemp.Docker: 5 * time.Minute,
}

// doctorWays are the ways in the order Auto tries them (design.md,
// "Throwaway PostgreSQL").
var doctorWays = []pgtemp.Mode{pgtemp.URL, pgtemp.Local, pgtemp.Docker}

// runDoctor prints, for each way learn can get a PostgreSQL (a database URL,
// local binaries, Docker), what this machine has for it and whether it
// works, having started it, used it and removed it; then which way learn
// would use and why. Leftovers of learn runs that were killed are removed
// first. Exit 0 when the way learn would use works; 1, with the three ways
// to fix it, when it does not; 130 when interrupted. Plain text, no colour.
func runDoctor(args []string, g *globals, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("doctor", g)
	pos, err := parse(fs, args)
	if err != nil {
		return 2, err
	}
	if len(pos) != 0 {
		return 2, usageErrorf("doctor takes no names, got %s", strings.Join(pos, " "))
	}
	if err := g.check(); err != nil {
		return 2, usageErrorf("%v", err)
	}
	opts, err := g.pgOptions()
	if err != nil {
		return 2, err
	}
	src := sources(fs, g)

	ctx, cancel := signalContext()
	defer cancel()
	p := &printer{w: stdout}
	p.line("learn doctor: the ways learn can get a PostgreSQL on this machine")
	p.line("")

	p.line("Leftovers of learn runs that were killed")
	doctorReap(ctx, p)
	if ctx.Err() != nil {
		return 130, errors.New("interrupted")
	}

	ways := map[pgtemp.Mode]pgtemp.Way{}
	for i, m := range doctorWays {
		p.line("")
		w := pgtemp.Probe(ctx, m, pgtemp.Options{DatabaseURL: opts.DatabaseURL}, doctorTimeouts[m])
		if ctx.Err() != nil {
			return 130, errors.New("interrupted: what the check had started is stopped and removed")
		}
		ways[m] = w
		p.line(fmt.Sprintf("%d. %s", i+1, w.Title))
		printWay(p, w, src)
	}

	v := choose(opts.Mode, src, ways)
	p.line("")
	if v.use == "" {
		p.line("learn would use: none of them")
	} else {
		p.line("learn would use: " + ways[v.use].Title)
	}
	p.item("because", v.why)
	if v.ok {
		p.line("")
		p.line("All is well: `learn`, `learn demo` and `learn serve` will use it.")
		return 0, nil
	}
	if v.use != "" {
		p.item("but", fmt.Sprintf("it does not work (see %d above)", slices.Index(doctorWays, v.use)+1))
	}
	p.line("")
	p.line("Any one of these fixes it:")
	if v.hint != "" {
		p.line("  - " + v.hint)
	}
	p.line("  - install the PostgreSQL server binaries, e.g. `apt install postgresql` or `brew install postgresql`")
	p.line("  - set DATABASE_URL or pass --database-url with a database where learn may create schemas")
	p.line("  - start Docker (learn then runs PostgreSQL in a container, image " + pgtemp.DockerImage() + ")")
	p.line("Reading the lesson and the interview card works without a database.")
	if v.use != "" {
		return 1, fmt.Errorf("the way learn would use, %s, does not work here (see above)", ways[v.use].Title)
	}
	return 1, errors.New("no way to get a PostgreSQL works here (see above)")
}

// doctorSources says where the URL and the mode came from, for the reasons
// the doctor gives.
type doctorSources struct {
	url  string // "--database-url" or "DATABASE_URL"; "" when there is none
	mode string // "--postgres" or "LEARN_POSTGRES"; "" for the default
}

func sources(fs *flag.FlagSet, g *globals) doctorSources {
	var s doctorSources
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "database-url":
			s.url = "--database-url"
		case "postgres":
			s.mode = "--postgres"
		}
	})
	if s.url == "" && g.databaseURL != "" {
		s.url = "DATABASE_URL"
	}
	if s.mode == "" && os.Getenv(envPostgres) != "" {
		s.mode = envPostgres
	}
	return s
}

// verdict is the way learn would use, why, and whether it works.
type verdict struct {
	use  pgtemp.Mode // "" when learn would find none
	why  string
	ok   bool
	hint string // one more line for the fixes, or ""
}

// choose says which way learn would use, following pgtemp.Start: a forced
// mode is that way; Auto takes the URL when one is set (a database the user
// named is used or reported, never replaced), else local binaries, else
// (none, or they fail) Docker.
func choose(mode pgtemp.Mode, src doctorSources, ways map[pgtemp.Mode]pgtemp.Way) verdict {
	if mode != pgtemp.Auto && mode != "" {
		by := src.mode
		if by == "" {
			by = "--postgres"
		}
		v := verdict{use: mode, ok: ways[mode].Works,
			why: fmt.Sprintf("%s %s forces it", by, mode)}
		if by == envPostgres {
			v.why = fmt.Sprintf("%s=%s forces it (pass --postgres auto to let learn choose)", envPostgres, mode)
		}
		if auto := choose(pgtemp.Auto, src, ways); !v.ok && auto.ok {
			v.hint = fmt.Sprintf("let learn choose (it would take %s, which works): --postgres auto%s",
				ways[auto.use].Title, unsetHint(src.mode == envPostgres, envPostgres))
		}
		return v
	}
	url, local, docker := ways[pgtemp.URL], ways[pgtemp.Local], ways[pgtemp.Docker]
	switch {
	case url.Available:
		v := verdict{use: pgtemp.URL, ok: url.Works,
			why: fmt.Sprintf("%s is set, so learn uses it (a database you name is used or reported, never replaced by another)", src.url)}
		if !v.ok {
			other := "the other ways"
			switch {
			case local.Works:
				other = "the local binaries, which work"
			case docker.Works:
				other = "Docker, which works"
			}
			v.hint = fmt.Sprintf("fix %s, or unset it to let learn use %s", src.url, other)
			if src.url == "--database-url" {
				v.hint = fmt.Sprintf("fix --database-url, or leave it out to let learn use %s", other)
			}
		}
		return v
	case local.Works:
		return verdict{use: pgtemp.Local, ok: true, why: "no database URL is set, and local PostgreSQL binaries were found"}
	case docker.Works && local.Available:
		return verdict{use: pgtemp.Docker, ok: true, why: "no database URL is set, and the local PostgreSQL binaries fail to start, so learn falls back to Docker"}
	case docker.Works:
		return verdict{use: pgtemp.Docker, ok: true, why: "no database URL is set and there are no local PostgreSQL binaries; a Docker daemon answers"}
	case local.Available:
		return verdict{use: pgtemp.Local, why: "no database URL is set, and local PostgreSQL binaries were found (Docker, the way after them, does not work either)"}
	case docker.Available:
		return verdict{use: pgtemp.Docker, why: "no database URL is set and there are no local PostgreSQL binaries; a Docker daemon answers"}
	}
	return verdict{why: "no database URL is set, there are no local PostgreSQL binaries, and there is no Docker daemon learn can use"}
}

func unsetHint(fromEnv bool, name string) string {
	if fromEnv {
		return " (or unset " + name + ")"
	}
	return ""
}

// printWay prints what the doctor found about one way.
func printWay(p *printer, w pgtemp.Way, src doctorSources) {
	if w.Mode == pgtemp.URL && src.url != "" {
		p.item("from", src.url)
	}
	for _, d := range w.Details {
		p.item("found", d)
	}
	switch {
	case !w.Available:
		p.item("available", "no: "+errText(w.Err))
	case w.Works:
		how := fmt.Sprintf("yes: started in %s", w.ReadyIn.Round(time.Millisecond))
		if w.Mode == pgtemp.Local {
			if w.Cold {
				how += " (cold: ran initdb and saved the template; later starts copy it)"
			} else {
				how += " (warm: copied the template)"
			}
		}
		done := map[pgtemp.Mode]string{
			pgtemp.URL:    "made a schema, ran SELECT 1 in it, dropped it",
			pgtemp.Local:  "made a schema, ran SELECT 1 in it, stopped the cluster and removed its directory",
			pgtemp.Docker: "made a schema, ran SELECT 1 in it, removed the container and its volume",
		}[w.Mode]
		p.item("works", how+"; "+done)
		p.item("server", w.Describe)
	default:
		p.item("works", "no: "+errText(w.Err))
	}
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// doctorReap removes the clusters and containers of learn runs that were
// killed, and says what it found.
func doctorReap(ctx context.Context, p *printer) {
	rep, err := pgtemp.Reap(ctx, nil)
	for _, r := range rep.Removed {
		p.item("local", r.String())
	}
	if n := len(rep.InUse); n > 0 {
		p.item("local", fmt.Sprintf("%d cluster%s of learn processes that still run, left alone", n, plural(n)))
	}
	for _, s := range rep.Skipped {
		p.item("local", fmt.Sprintf("left %s alone: %s", s.Dir, s.Why))
	}
	if err != nil && ctx.Err() == nil {
		p.item("local", "could not remove all: "+err.Error())
	}
	if len(rep.Removed)+len(rep.InUse)+len(rep.Skipped) == 0 && err == nil {
		p.item("local", "no cluster directories of learn's")
	}

	left, err := pgtemp.ReapDocker(ctx, nil)
	switch {
	case errors.Is(err, pgtemp.ErrNoDocker):
		p.item("docker", "no Docker daemon learn can use, nothing to look at")
	case err != nil:
		if ctx.Err() == nil {
			p.item("docker", "could not look: "+err.Error())
		}
	case len(left) == 0:
		p.item("docker", "no containers of learn's")
	}
	for _, l := range left {
		p.item("docker", l.String())
	}
}

// printer writes the doctor's plain-text report.
type printer struct{ w io.Writer }

func (p *printer) line(s string) { fmt.Fprintln(p.w, s) }

// item writes "   label: text", with the text's later lines indented under it.
func (p *printer) item(label, text string) {
	pad := strings.Repeat(" ", 3+len(label)+2)
	text = strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n"+pad)
	fmt.Fprintf(p.w, "   %s: %s\n", label, text)
}
