package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/internal/cluster"
)

// ErrNoBinaries is wrapped when no directory holds both initdb and postgres.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries (initdb and postgres) found in PATH, `pg_config --bindir`, /usr/lib/postgresql/*/bin, Homebrew or Postgres.app")

// candidate is a directory that may hold the server binaries, and why it was
// looked at.
type candidate struct {
	dir, source string
}

// Finder is what Find asks the system; tests replace it.
type Finder struct {
	LookPath func(string) (string, error)
	Bindir   func() string // output of `pg_config --bindir`, "" when none
	Glob     func(string) ([]string, error)
	Version  func(dir string) (string, error)
}

// SystemFinder asks this machine. cacheDir ("" = the user cache directory)
// holds the versions of binaries seen before (see cluster.CachedVersion).
func SystemFinder(ctx context.Context, cacheDir string) Finder {
	return Finder{
		Version:  func(dir string) (string, error) { return cluster.CachedVersion(ctx, cacheDir, dir) },
		LookPath: exec.LookPath,
		Bindir: func() string {
			p, err := exec.LookPath("pg_config")
			if err != nil {
				return ""
			}
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, p, "--bindir").Output()
			if err != nil {
				return ""
			}
			return strings.TrimSpace(string(out))
		},
		Glob: filepath.Glob,
	}
}

// candidates lists, best first, the directories to look in:
// pg_config --bindir (it resolves packaging wrappers such as Debian's), the
// directories of postgres and initdb on PATH with symlinks resolved,
// /usr/lib/postgresql/*/bin newest major first, Homebrew, then Postgres.app.
func (f Finder) candidates() []candidate {
	var out []candidate
	if d := f.Bindir(); d != "" {
		out = append(out, candidate{d, "pg_config --bindir"})
	}
	for _, name := range []string{"postgres", "initdb"} {
		if p, err := f.LookPath(name); err == nil {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
			out = append(out, candidate{filepath.Dir(p), name + " on PATH"})
		}
	}
	globbed := func(pattern, source string) {
		dirs, _ := f.Glob(pattern)
		sortNewestFirst(dirs)
		for _, d := range dirs {
			out = append(out, candidate{d, source})
		}
	}
	globbed("/usr/lib/postgresql/*/bin", "/usr/lib/postgresql")
	globbed("/opt/homebrew/opt/postgresql@*/bin", "Homebrew")
	globbed("/usr/local/opt/postgresql@*/bin", "Homebrew")
	globbed("/opt/homebrew/bin", "Homebrew") // a pattern without * matches itself if it exists
	globbed("/usr/local/bin", "Homebrew")
	globbed("/Applications/Postgres.app/Contents/Versions/*/bin", "Postgres.app")
	return out
}

var versionDigits = regexp.MustCompile(`[0-9]+(\.[0-9]+)*`)

// sortNewestFirst orders directories such as /usr/lib/postgresql/9.6/bin,
// …/15/bin and …/postgresql@16/bin by the version in their path, newest
// first, numerically (15 before 9.6); paths without one go last.
func sortNewestFirst(dirs []string) {
	key := func(d string) []int {
		m := versionDigits.FindString(filepath.Base(filepath.Dir(d)))
		if m == "" {
			return nil
		}
		var v []int
		for _, p := range strings.Split(m, ".") {
			n, _ := strconv.Atoi(p)
			v = append(v, n)
		}
		return v
	}
	sort.SliceStable(dirs, func(i, j int) bool {
		a, b := key(dirs[i]), key(dirs[j])
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] > b[k]
			}
		}
		return len(a) > len(b)
	})
}

// Find returns the first candidate directory that holds a real
// initdb and postgres (not a wrapper script) whose version it can read.
func Find(ctx context.Context, f Finder) (cluster.Binaries, error) {
	seen := map[string]bool{}
	var problems []string
	for _, c := range f.candidates() {
		dir, ok := serverDir(c.dir)
		if !ok || seen[dir] {
			continue
		}
		seen[dir] = true
		version, err := f.Version(dir)
		if err != nil {
			if ctx.Err() != nil {
				return cluster.Binaries{}, ctx.Err()
			}
			problems = append(problems, fmt.Sprintf("%s (%s): %v", dir, c.source, err))
			continue
		}
		return cluster.Binaries{Dir: dir, Version: version, Major: cluster.MajorOf(version)}, nil
	}
	if len(problems) > 0 {
		return cluster.Binaries{}, fmt.Errorf("%w; unusable: %s", ErrNoBinaries, strings.Join(problems, "; "))
	}
	return cluster.Binaries{}, ErrNoBinaries
}

// serverDir returns the directory with both server programs for a candidate:
// the one postgres resolves to through symlinks (so /usr/local/bin/postgres
// leads to /usr/lib/postgresql/15/bin), else the candidate itself.
func serverDir(dir string) (string, bool) {
	if real, err := filepath.EvalSymlinks(filepath.Join(dir, "postgres")); err == nil {
		if d := filepath.Dir(real); isServerDir(d) {
			return d, true
		}
	}
	if isServerDir(dir) {
		if abs, err := filepath.Abs(dir); err == nil {
			return abs, true
		}
	}
	return "", false
}

func isServerDir(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return !isScript(filepath.Join(dir, "postgres"))
}

// isScript reports whether the file starts with "#!", as packaging wrappers do.
func isScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	var head [2]byte
	_, err = io.ReadFull(f, head[:])
	return err == nil && string(head[:]) == "#!"
}
