package pgtemp

import (
	"bytes"
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
)

// errNoBinaries is wrapped when no directory holds both initdb and postgres.
var errNoBinaries = errors.New("no PostgreSQL server binaries (initdb and postgres) found in PATH, `pg_config --bindir`, /usr/lib/postgresql/*/bin, Homebrew or Postgres.app")

// binaries is a directory holding a usable initdb and postgres.
type binaries struct {
	dir     string // absolute, symlinks resolved
	version string // e.g. "15.18"
	major   string // e.g. "15"; "9.6" before PostgreSQL 10
}

// candidate is a directory that may hold the server binaries, and why it was
// looked at.
type candidate struct {
	dir, source string
}

// finder abstracts what findBinaries asks the system, for tests.
type finder struct {
	lookPath func(string) (string, error)
	bindir   func() string // output of `pg_config --bindir`, "" when none
	glob     func(string) ([]string, error)
	version  func(dir string) (string, error)
}

// systemFinder asks this machine. cacheDir ("" = the user cache directory)
// holds the versions of binaries seen before (see cachedServerVersion).
func systemFinder(ctx context.Context, cacheDir string) finder {
	return finder{
		version:  func(dir string) (string, error) { return cachedServerVersion(ctx, cacheDir, dir) },
		lookPath: exec.LookPath,
		bindir: func() string {
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
		glob: filepath.Glob,
	}
}

// candidates lists, best first, the directories to look in:
// pg_config --bindir (it resolves packaging wrappers such as Debian's), the
// directories of postgres and initdb on PATH with symlinks resolved,
// /usr/lib/postgresql/*/bin newest major first, Homebrew, then Postgres.app.
func (f finder) candidates() []candidate {
	var out []candidate
	if d := f.bindir(); d != "" {
		out = append(out, candidate{d, "pg_config --bindir"})
	}
	for _, name := range []string{"postgres", "initdb"} {
		if p, err := f.lookPath(name); err == nil {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
			out = append(out, candidate{filepath.Dir(p), name + " on PATH"})
		}
	}
	globbed := func(pattern, source string) {
		dirs, _ := f.glob(pattern)
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

// findBinaries returns the first candidate directory that holds a real
// initdb and postgres (not a wrapper script) whose version it can read.
func findBinaries(ctx context.Context, f finder) (binaries, error) {
	seen := map[string]bool{}
	var problems []string
	for _, c := range f.candidates() {
		dir, ok := serverDir(c.dir)
		if !ok || seen[dir] {
			continue
		}
		seen[dir] = true
		version, err := f.version(dir)
		if err != nil {
			if ctx.Err() != nil {
				return binaries{}, ctx.Err()
			}
			problems = append(problems, fmt.Sprintf("%s (%s): %v", dir, c.source, err))
			continue
		}
		return binaries{dir: dir, version: version, major: majorOf(version)}, nil
	}
	if len(problems) > 0 {
		return binaries{}, fmt.Errorf("%w; unusable: %s", errNoBinaries, strings.Join(problems, "; "))
	}
	return binaries{}, errNoBinaries
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

var serverVersionRE = regexp.MustCompile(`\(PostgreSQL\) ([0-9]+(?:\.[0-9]+)*)`)

// serverVersion runs `postgres --version` (allowed as root) and returns e.g. "15.18".
func serverVersion(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "postgres"), "--version")
	cmd.Env = serverEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("postgres --version failed: %v: %s", err, strings.TrimSpace(out.String()))
	}
	m := serverVersionRE.FindStringSubmatch(out.String())
	if m == nil {
		return "", fmt.Errorf("postgres --version printed %q, not a PostgreSQL version", strings.TrimSpace(out.String()))
	}
	return m[1], nil
}

// majorOf returns the major version: "15" for 15.18, "9.6" for 9.6.24.
func majorOf(version string) string {
	parts := strings.Split(version, ".")
	if n, err := strconv.Atoi(parts[0]); err == nil && n < 10 && len(parts) > 1 {
		return parts[0] + "." + parts[1]
	}
	return parts[0]
}

// serverEnv is the environment for PostgreSQL programs: learn's own without
// the PG* variables (PGPORT, PGDATA… would change what the server does) and
// with the C locale, so messages in errors are English and no locale is needed.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "LANG=C")
}
