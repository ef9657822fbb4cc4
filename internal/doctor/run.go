package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/dustin/go-humanize"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/workshop"
	"github.com/learn-idempotency/learn/pgtemp"
)

// This file is learn doctor as the command runs it (Run), and its
// --clean-cache (CleanCache): the probes, the reaping and the printing
// around the decisions above.

// CleanCache is learn doctor --clean-cache: it removes learn's directory in
// the user cache directory and says what it freed.
func CleanCache(stdout io.Writer) (int, error) {
	dir, freed, err := pgtemp.CleanCache()
	if err != nil {
		return exit.Failure, fmt.Errorf("could not clean learn's cache: %w", err)
	}
	if freed == 0 {
		fmt.Fprintf(stdout, "learn's cache %s is empty: nothing to remove\n", dir)
		return exit.OK, nil
	}
	fmt.Fprintf(stdout, "removed %s (%s): the downloaded PostgreSQL and the cluster templates; the next start downloads or runs initdb again\n", dir, humanize.Bytes(uint64(freed)))
	return exit.OK, nil
}

// Run is learn doctor: it prints, for each way learn can get a PostgreSQL (a database URL,
// local binaries, Docker), what this machine has for it and whether it
// works, having started it, used it and removed it; then which way learn
// would use with opts and why (src says where opts came from). Leftovers of
// learn runs that were killed (clusters, containers, interrupted template
// copies, and schemas in the database of a URL) are removed first; schemas
// whose learn cannot be checked from here are listed with the statement
// that drops them. It returns 0 when the way learn
// would use works; 1, with the fixes that fit this machine
// (Fixes), when it does not; 128 + the signal when interrupted.
// Plain text, no colour.
func Run(ctx context.Context, opts pgtemp.Options, src Sources, stdout io.Writer, download func(w io.Writer, prefix string) func(pgtemp.DownloadProgress)) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &Printer{W: stdout}
	p.Line("learn doctor: the ways learn can get a PostgreSQL on this machine")
	p.Line("")

	p.Line("Leftovers of learn runs that were killed")
	reap(ctx, p, opts.DatabaseURL, src)
	summaries(p)
	if ctx.Err() != nil {
		return exit.OK, exit.Interrupted(ctx, "")
	}

	ways := map[pgtemp.Mode]pgtemp.Way{}
	for i, m := range Ways {
		p.Line("")
		po := pgtemp.Options{DatabaseURL: opts.DatabaseURL}
		if m == pgtemp.Download {
			// Downloaded only when learn would use it: forced, or no earlier way would be used.
			auto := opts.Mode == pgtemp.Auto || opts.Mode == ""
			earlier := ways[pgtemp.URL].Available || ways[pgtemp.Local].Works || ways[pgtemp.Docker].Works
			po.CacheOnly = !(opts.Mode == pgtemp.Download || auto && !earlier)
			if download != nil {
				po.OnDownload = download(stdout, "   ")
			}
		}
		w := pgtemp.Probe(ctx, m, po, Timeouts[m])
		if ctx.Err() != nil {
			return exit.OK, exit.Interrupted(ctx, ": what the check had started is stopped and removed")
		}
		ways[m] = w
		p.Line(fmt.Sprintf("%d. %s", i+1, w.Title))
		p.Way(w, src)
	}

	v := Choose(opts.Mode, src, ways)
	p.Line("")
	if v.Use == "" {
		p.Line("learn would use: none of them")
	} else {
		p.Line("learn would use: " + ways[v.Use].Title)
	}
	p.Item("because", v.Why)
	if v.OK {
		p.Line("")
		p.Line("All is well: `learn`, `learn demo` and `learn serve` will use it.")
		return exit.OK, nil
	}
	if v.Use != "" {
		p.Item("but", fmt.Sprintf("it does not work (see %d above)", slices.Index(Ways, v.Use)+1))
	}
	p.Line("")
	fix := Fixes(opts.Mode, src, ways, v)
	if len(fix) == 1 {
		p.Line("To fix it:")
	} else {
		p.Line("Any one of these fixes it:")
	}
	for _, f := range fix {
		p.Line("  - " + f)
	}
	p.Line("Reading the lesson and the interview card works without a database.")
	if v.Use != "" {
		return exit.Failure, fmt.Errorf("the way learn would use, %s, does not work here (see above)", ways[v.Use].Title)
	}
	return exit.Failure, errors.New("no way to get a PostgreSQL works here (see above)")
}

// reap removes the clusters, containers and (when a database URL is
// set) schemas of learn runs that were killed, and says what it found:
// every schema of learn's is accounted for (removed, in use, or left with
// the statement that drops it), so it never says there are none while
// there are some.
func reap(ctx context.Context, p *Printer, databaseURL string, src Sources) {
	rep, err := pgtemp.Reap(ctx, nil)
	for _, r := range rep.Removed {
		p.Item("local", r.String())
	}
	if n := len(rep.InUse); n > 0 {
		p.Item("local", fmt.Sprintf("%d cluster%s of learn processes that still run, left alone", n, plural(n)))
	}
	for _, s := range rep.Skipped {
		p.Item("local", fmt.Sprintf("left %s alone: %s", s.Dir, s.Why))
	}
	for _, c := range rep.Copies {
		p.Item("cache", c.String())
	}
	if err != nil && ctx.Err() == nil {
		p.Item("local", "could not remove all: "+err.Error())
	}
	if len(rep.Removed)+len(rep.InUse)+len(rep.Skipped)+len(rep.Copies) == 0 && err == nil {
		p.Item("local", "no cluster directories of learn's")
	}

	left, err := pgtemp.ReapDocker(ctx, nil)
	switch {
	case errors.Is(err, pgtemp.ErrNoDocker):
		p.Item("docker", "no Docker daemon learn can use, nothing to look at")
	case err != nil:
		if ctx.Err() == nil {
			p.Item("docker", "could not look: "+err.Error())
		}
	case len(left) == 0:
		p.Item("docker", "no containers of learn's")
	}
	for _, l := range left {
		p.Item("docker", l.String())
	}

	if databaseURL == "" {
		p.Item("url", "no database URL is set, nothing to look at")
		return
	}
	var removed []string
	srep, err := pgtemp.ReapSchemas(ctx, databaseURL, func(format string, args ...any) {
		removed = append(removed, fmt.Sprintf(format, args...))
	})
	for _, r := range removed {
		p.Item("url", r)
	}
	if n := len(srep.InUse); n > 0 {
		p.Item("url", fmt.Sprintf("%d schema%s of learn processes that still run, left alone", n, plural(n)))
	}
	for _, l := range srep.Left {
		p.Item("url", l.String())
	}
	switch {
	case err != nil:
		if ctx.Err() == nil {
			p.Item("url", err.Error()) // it says what failed: reaching the database, or dropping a schema
		}
	case len(srep.Dropped)+len(srep.InUse)+len(srep.Left) == 0:
		p.Item("url", "no schemas of learn's in the database "+src.URL+" names")
	}
}

// summaries says where the room's summary of a workshop that never
// ended (killed, crashed, a power cut) is, as its marker in learn's
// summary directory says (each said once: the next learn workshop no
// longer repeats it), and where the summary of a workshop running now is
// kept.
func summaries(p *Printer) {
	dir, err := workshop.DefaultSummaryDir()
	if err != nil {
		p.Item("workshop", "no summary directory to look in: "+err.Error())
		return
	}
	kept, err := workshop.KeptSummaries(dir)
	if err != nil {
		p.Item("workshop", fmt.Sprintf("could not look in %s: %v", dir, err))
		return
	}
	for _, k := range kept {
		p.Item("workshop", k.String())
	}
	if len(kept) == 0 {
		p.Item("workshop", "no room's summary left by a workshop that did not end")
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
