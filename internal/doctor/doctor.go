// Package doctor holds the decisions of `learn doctor`: which way to get a
// PostgreSQL learn would use on this machine and why (Choose, following
// pgtemp.Start's order: a URL, local binaries, Docker, the download), what
// fixes fit when that way does not work (Fixes), how a probed way is
// reported (Printer.Way), and where the URL and the mode came from
// (SourcesOf); and the command itself (Run, in run.go): the leftovers of
// killed runs reaped and said, each way probed (pgtemp.Probe: started,
// used and removed), the verdict and the fixes printed; CleanCache is its
// --clean-cache.
package doctor

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/learn-idempotency/learn/pgtemp"
)

// EnvPostgres names the environment variable that gives --postgres its
// default.
const EnvPostgres = "LEARN_POSTGRES"

// Timeouts is how long the doctor gives each way to start. Docker's
// includes pulling the image the first time.
var Timeouts = map[pgtemp.Mode]time.Duration{
	pgtemp.URL:    30 * time.Second,
	pgtemp.Local:  90 * time.Second,
	pgtemp.Docker: 5 * time.Minute,
	// A first download of about 30 MB on a slow link, and initdb.
	pgtemp.Download: 10 * time.Minute,
}

// Ways are the ways in the order Auto tries them (design.md,
// "Throwaway PostgreSQL").
var Ways = []pgtemp.Mode{pgtemp.URL, pgtemp.Local, pgtemp.Docker, pgtemp.Download}

// Sources says where the URL and the mode came from, for the reasons
// the doctor gives.
type Sources struct {
	URL  string // "--database-url" or "DATABASE_URL"; "" when there is none
	Mode string // "--postgres" or "LEARN_POSTGRES"; "" for the default
}

// SourcesOf is where the database URL and the mode came from: a flag
// (urlFlag: --database-url was given; modeFlag: --postgres was), else the
// environment (databaseURL is the URL in use, which only DATABASE_URL can
// have given then; EnvPostgres), else neither (the default).
func SourcesOf(urlFlag, modeFlag bool, databaseURL string) Sources {
	var s Sources
	if urlFlag {
		s.URL = "--database-url"
	}
	if modeFlag {
		s.Mode = "--postgres"
	}
	if s.URL == "" && databaseURL != "" {
		s.URL = "DATABASE_URL"
	}
	if s.Mode == "" && os.Getenv(EnvPostgres) != "" {
		s.Mode = EnvPostgres
	}
	return s
}

// Verdict is the way learn would use, why (a clause for "because: …"), and
// whether it works.
type Verdict struct {
	Use pgtemp.Mode // "" when learn would find none
	Why string
	OK  bool
}

// Choose says which way learn would use, following pgtemp.Start: a forced
// mode is that way; Auto takes the URL when one is set (a database the user
// named is used or reported, never replaced), else local binaries, else
// (none, or they fail) Docker.
func Choose(mode pgtemp.Mode, src Sources, ways map[pgtemp.Mode]pgtemp.Way) Verdict {
	if mode != pgtemp.Auto && mode != "" {
		by := src.Mode
		if by == "" {
			by = "--postgres"
		}
		v := Verdict{Use: mode, OK: ways[mode].Works,
			Why: fmt.Sprintf("%s %s forces it", by, mode)}
		if by == EnvPostgres {
			v.Why = fmt.Sprintf("%s=%s forces it (pass --postgres auto to let learn choose)", EnvPostgres, mode)
		}
		return v
	}
	url, local, docker, download := ways[pgtemp.URL], ways[pgtemp.Local], ways[pgtemp.Docker], ways[pgtemp.Download]
	switch {
	case url.Available:
		return Verdict{Use: pgtemp.URL, OK: url.Works,
			Why: fmt.Sprintf("%s is set, so learn uses it (a database you name is used or reported, never replaced by another)", src.URL)}
	case local.Works:
		return Verdict{Use: pgtemp.Local, OK: true, Why: "no database URL is set, and local PostgreSQL binaries were found"}
	case docker.Works && local.Available:
		return Verdict{Use: pgtemp.Docker, OK: true, Why: "no database URL is set, and the local PostgreSQL binaries fail to start, so learn falls back to Docker"}
	case docker.Works:
		return Verdict{Use: pgtemp.Docker, OK: true, Why: "no database URL is set and there are no local PostgreSQL binaries; a Docker daemon answers"}
	case download.Works && (local.Available || docker.Available):
		return Verdict{Use: pgtemp.Download, OK: true, Why: "no database URL is set, and neither the local PostgreSQL binaries nor Docker work, so learn uses PostgreSQL downloaded into the user cache directory"}
	case download.Works:
		return Verdict{Use: pgtemp.Download, OK: true, Why: "no database URL is set, there are no local PostgreSQL binaries and no Docker daemon, so learn uses PostgreSQL downloaded into the user cache directory (it needs nothing installed)"}
	case local.Available:
		return Verdict{Use: pgtemp.Local, Why: "no database URL is set, and local PostgreSQL binaries were found (Docker, the way after them, does not work either)"}
	case docker.Available:
		return Verdict{Use: pgtemp.Docker, Why: "no database URL is set and there are no local PostgreSQL binaries; a Docker daemon answers"}
	}
	if download.Available {
		return Verdict{Use: pgtemp.Download, Why: "no database URL is set, there are no local PostgreSQL binaries and no Docker daemon learn can use, so learn would download PostgreSQL"}
	}
	return Verdict{Why: "no database URL is set, there are no local PostgreSQL binaries, there is no Docker daemon learn can use, and PostgreSQL cannot be downloaded"}
}

// Fixes are the lines that tell how to get learn a PostgreSQL when the way
// it would use (v, from Choose) does not work: what fits this machine, never
// installing or starting what is here already. With a way forced by
// --postgres or LEARN_POSTGRES, a way that works instead comes first; then
// the fix of the forced way; then, when no other way works, the others, each
// with the force dropped or changed. Without a force, a broken URL comes
// first (it would be used whatever else works), then what makes each other
// way work.
func Fixes(mode pgtemp.Mode, src Sources, ways map[pgtemp.Mode]pgtemp.Way, v Verdict) []string {
	if v.OK {
		return nil
	}
	var out []string
	if mode != pgtemp.Auto && mode != "" {
		force, leave, drop := "--postgres "+string(mode), "leave it out", "leave out --postgres "+string(mode)+", and "
		if src.Mode == EnvPostgres {
			force, leave, drop = EnvPostgres+"="+string(mode), "unset it", "unset "+EnvPostgres+", and "
		}
		alt, auto := pgtemp.Mode(""), Choose(pgtemp.Auto, src, ways)
		if auto.OK {
			alt = auto.Use
		} else if i := slices.IndexFunc(Ways, func(m pgtemp.Mode) bool { return m != mode && ways[m].Works }); i >= 0 {
			alt = Ways[i]
		}
		if alt != "" {
			how := "pass --postgres " + string(alt)
			if auto.OK {
				how = fmt.Sprintf("%s (or --postgres %s)", leave, alt)
				if src.Mode == EnvPostgres {
					how = fmt.Sprintf("%s (or pass --postgres %s)", leave, alt)
				}
			}
			out = append(out, fmt.Sprintf("%s forces %s, %s; %s to use %s, %s",
				force, wayName(mode), wayState(mode, ways[mode]), how, wayName(alt), which(alt, true)))
		}
		out = append(out, repair(mode, ways[mode], src))
		if alt == "" {
			for _, m := range fixOrder(mode, ways) {
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
	if v.Use == pgtemp.URL {
		// A URL that is set is used whatever else works: fix it, or drop it.
		unset, drop := "unset it", "unset "+src.URL+", and "
		if src.URL == "--database-url" {
			unset, drop = "leave it out", "leave out --database-url, and "
		}
		for _, m := range fixOrder(pgtemp.URL, ways) {
			if ways[m].Works {
				return []string{fmt.Sprintf("fix %s, or %s to let learn use %s, %s", src.URL, unset, wayName(m), which(m, true))}
			}
		}
		out = append(out, repair(pgtemp.URL, ways[pgtemp.URL], src))
		for _, m := range fixOrder(pgtemp.URL, ways) {
			out = append(out, drop+repair(m, ways[m], src))
		}
		return out
	}
	// No URL: setting one, or making the local binaries or Docker work,
	// each gives learn a way (it falls back from local binaries to Docker).
	first := v.Use
	if first == "" {
		first = pgtemp.Local
	}
	out = append(out, repair(first, ways[first], src))
	for _, m := range fixOrder(first, ways) {
		out = append(out, repair(m, ways[m], src))
	}
	return out
}

// fixOrder lists the ways other than m in the order the fixes name them:
// local binaries, a URL, Docker, the download (only when the doctor
// looked at it: a way not in ways is not suggested).
func fixOrder(m pgtemp.Mode, ways map[pgtemp.Mode]pgtemp.Way) []pgtemp.Mode {
	var out []pgtemp.Mode
	for _, w := range []pgtemp.Mode{pgtemp.Local, pgtemp.URL, pgtemp.Docker, pgtemp.Download} {
		if _, looked := ways[w]; w != m && (looked || w != pgtemp.Download) {
			out = append(out, w)
		}
	}
	return out
}

// repair says what makes one way work: get what is missing, or fix what is
// here (the report above says what is wrong with it).
func repair(m pgtemp.Mode, w pgtemp.Way, src Sources) string {
	n := slices.Index(Ways, m) + 1
	switch m {
	case pgtemp.URL:
		if w.Missing {
			return "set DATABASE_URL or pass --database-url with a database where learn may create schemas"
		}
		by := src.URL
		if by == "" {
			by = "the database URL"
		}
		return fmt.Sprintf("fix %s (see %d above)", by, n)
	case pgtemp.Local:
		if w.Missing {
			return "install the PostgreSQL server binaries, e.g. `apt install postgresql` or `brew install postgresql`"
		}
		return fmt.Sprintf("make the local PostgreSQL binaries work (see %d above)", n)
	case pgtemp.Download:
		if w.Missing {
			return "let learn download PostgreSQL once: go online (it fetches from " + pgtemp.DownloadRepository() + "), or set " + pgtemp.RepositoryEnv + " to a Maven mirror you can reach"
		}
		return fmt.Sprintf("fix what stops the downloaded PostgreSQL (see %d above)", n)
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
	case pgtemp.Download:
		return "the downloaded PostgreSQL"
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
