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

	"github.com/learn-idempotency/learn/pgtemp"
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
// would use and why. Leftovers of learn runs that were killed (clusters,
// containers, and schemas in the database of a URL) are removed first. Exit
// 0 when the way learn would use works; 1, with the fixes that fit this
// machine (fixes), when it does not; 130 when interrupted. Plain text, no
// colour.
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
	doctorReap(ctx, p, opts.DatabaseURL, src)
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
	fix := fixes(opts.Mode, src, ways, v)
	if len(fix) == 1 {
		p.line("To fix it:")
	} else {
		p.line("Any one of these fixes it:")
	}
	for _, f := range fix {
		p.line("  - " + f)
	}
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
	use pgtemp.Mode // "" when learn would find none
	why string
	ok  bool
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
		return v
	}
	url, local, docker := ways[pgtemp.URL], ways[pgtemp.Local], ways[pgtemp.Docker]
	switch {
	case url.Available:
		return verdict{use: pgtemp.URL, ok: url.Works,
			why: fmt.Sprintf("%s is set, so learn uses it (a database you name is used or reported, never replaced by another)", src.url)}
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

// fixes are the lines that tell how to get learn a PostgreSQL when the way
// it would use (v, from choose) does not work: what fits this machine, never
// installing or starting what is here already. With a way forced by
// --postgres or LEARN_POSTGRES, a way that works instead comes first; then
// the fix of the forced way; then, when no other way works, the others, each
// with the force dropped or changed. Without a force, a broken URL comes
// first (it would be used whatever else works), then what makes each other
// way work.
func fixes(mode pgtemp.Mode, src doctorSources, ways map[pgtemp.Mode]pgtemp.Way, v verdict) []string {
	if v.ok {
		return nil
	}
	var out []string
	if mode != pgtemp.Auto && mode != "" {
		force, leave, drop := "--postgres "+string(mode), "leave it out", "leave out --postgres "+string(mode)+", and "
		if src.mode == envPostgres {
			force, leave, drop = envPostgres+"="+string(mode), "unset it", "unset "+envPostgres+", and "
		}
		alt, auto := pgtemp.Mode(""), choose(pgtemp.Auto, src, ways)
		if auto.ok {
			alt = auto.use
		} else if i := slices.IndexFunc(doctorWays, func(m pgtemp.Mode) bool { return m != mode && ways[m].Works }); i >= 0 {
			alt = doctorWays[i]
		}
		if alt != "" {
			how := "pass --postgres " + string(alt)
			if auto.ok {
				how = fmt.Sprintf("%s (or --postgres %s)", leave, alt)
				if src.mode == envPostgres {
					how = fmt.Sprintf("%s (or pass --postgres %s)", leave, alt)
				}
			}
			out = append(out, fmt.Sprintf("%s forces %s, %s; %s to use %s, %s",
				force, wayName(mode), wayState(mode, ways[mode]), how, wayName(alt), which(alt, true)))
		}
		out = append(out, repair(mode, ways[mode], src))
		if alt == "" {
			for _, m := range fixOrder(mode) {
				if m != pgtemp.URL && ways[pgtemp.URL].Available {
					// Without the force the URL would be used again.
					out = append(out, "pass --postgres "+string(m)+" instead, and "+repair(m, ways[m], src))
				} else {
					out = append(out, drop+repair(m, ways[m], src))
				}
			}
		}
		return out
	}
	if v.use == pgtemp.URL {
		// A URL that is set is used whatever else works: fix it, or drop it.
		unset, drop := "unset it", "unset "+src.url+", and "
		if src.url == "--database-url" {
			unset, drop = "leave it out", "leave out --database-url, and "
		}
		for _, m := range fixOrder(pgtemp.URL) {
			if ways[m].Works {
				return []string{fmt.Sprintf("fix %s, or %s to let learn use %s, %s", src.url, unset, wayName(m), which(m, true))}
			}
		}
		out = append(out, repair(pgtemp.URL, ways[pgtemp.URL], src))
		for _, m := range fixOrder(pgtemp.URL) {
			out = append(out, drop+repair(m, ways[m], src))
		}
		return out
	}
	// No URL: setting one, or making the local binaries or Docker work,
	// each gives learn a way (it falls back from local binaries to Docker).
	first := v.use
	if first == "" {
		first = pgtemp.Local
	}
	out = append(out, repair(first, ways[first], src))
	for _, m := range fixOrder(first) {
		out = append(out, repair(m, ways[m], src))
	}
	return out
}

// fixOrder lists the ways other than m in the order the fixes name them:
// local binaries, a URL, Docker.
func fixOrder(m pgtemp.Mode) []pgtemp.Mode {
	var out []pgtemp.Mode
	for _, w := range []pgtemp.Mode{pgtemp.Local, pgtemp.URL, pgtemp.Docker} {
		if w != m {
			out = append(out, w)
		}
	}
	return out
}

// repair says what makes one way work: get what is missing, or fix what is
// here (the report above says what is wrong with it).
func repair(m pgtemp.Mode, w pgtemp.Way, src doctorSources) string {
	n := slices.Index(doctorWays, m) + 1
	switch m {
	case pgtemp.URL:
		if w.Missing {
			return "set DATABASE_URL or pass --database-url with a database where learn may create schemas"
		}
		by := src.url
		if by == "" {
			by = "the database URL"
		}
		return fmt.Sprintf("fix %s (see %d above)", by, n)
	case pgtemp.Local:
		if w.Missing {
			return "install the PostgreSQL server binaries, e.g. `apt install postgresql` or `brew install postgresql`"
		}
		return fmt.Sprintf("make the local PostgreSQL binaries work (see %d above)", n)
	default:
		if w.Missing {
			return "start Docker (learn then runs PostgreSQL in a container, image " + pgtemp.DockerImage() + ")"
		}
		return fmt.Sprintf("fix what stops PostgreSQL in Docker (see %d above)", n)
	}
}

// wayName names a way inside a sentence.
func wayName(m pgtemp.Mode) string {
	switch m {
	case pgtemp.URL:
		return "the database URL"
	case pgtemp.Local:
		return "the local binaries"
	}
	return "Docker"
}

// wayState says, after wayName, that a way does not work.
func wayState(m pgtemp.Mode, w pgtemp.Way) string {
	if m == pgtemp.URL && w.Missing {
		return "which is not set"
	}
	return which(m, false) + " here"
}

// which is "which works" or "which does not work", in the number wayName
// gives the way.
func which(m pgtemp.Mode, works bool) string {
	switch {
	case m == pgtemp.Local && works:
		return "which work"
	case m == pgtemp.Local:
		return "which do not work"
	case works:
		return "which works"
	}
	return "which does not work"
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

// doctorReap removes the clusters, containers and (when a database URL is
// set) schemas of learn runs that were killed, and says what it found.
func doctorReap(ctx context.Context, p *printer, databaseURL string, src doctorSources) {
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

	if databaseURL == "" {
		p.item("url", "no database URL is set, nothing to look at")
		return
	}
	var removed []string
	dropped, err := pgtemp.ReapSchemas(ctx, databaseURL, func(format string, args ...any) {
		removed = append(removed, fmt.Sprintf(format, args...))
	})
	for _, r := range removed {
		p.item("url", r)
	}
	switch {
	case err != nil:
		if ctx.Err() == nil {
			p.item("url", err.Error()) // it says what failed: reaching the database, or dropping a schema
		}
	case len(dropped) == 0:
		p.item("url", "no schemas of killed learn runs in the database "+src.url+" names")
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
