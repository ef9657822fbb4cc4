//go:build linux

package pgtemp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCandidatesOrder(t *testing.T) {
	f := finder{
		lookPath: func(name string) (string, error) {
			if name == "postgres" {
				return "/nonexistent/path/bin/postgres", nil
			}
			return "", errors.New("not found")
		},
		bindir: func() string { return "/from/pg_config/bin" },
		glob: func(pattern string) ([]string, error) {
			switch pattern {
			case "/usr/lib/postgresql/*/bin":
				return []string{"/usr/lib/postgresql/10/bin", "/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/15/bin"}, nil
			case "/opt/homebrew/opt/postgresql@*/bin":
				return []string{"/opt/homebrew/opt/postgresql@14/bin", "/opt/homebrew/opt/postgresql@16/bin"}, nil
			case "/opt/homebrew/bin", "/usr/local/bin":
				return []string{pattern}, nil
			case "/Applications/Postgres.app/Contents/Versions/*/bin":
				return []string{"/Applications/Postgres.app/Contents/Versions/latest/bin", "/Applications/Postgres.app/Contents/Versions/17/bin"}, nil
			}
			return nil, nil
		},
	}
	var got []string
	for _, c := range f.candidates() {
		got = append(got, c.dir)
	}
	want := []string{
		"/from/pg_config/bin",
		"/nonexistent/path/bin",
		"/usr/lib/postgresql/15/bin",
		"/usr/lib/postgresql/10/bin",
		"/usr/lib/postgresql/9.6/bin",
		"/opt/homebrew/opt/postgresql@16/bin",
		"/opt/homebrew/opt/postgresql@14/bin",
		"/opt/homebrew/bin",
		"/usr/local/bin",
		"/Applications/Postgres.app/Contents/Versions/17/bin",
		"/Applications/Postgres.app/Contents/Versions/latest/bin",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("candidates:\n got %q\nwant %q", got, want)
	}
}

func TestMajorOf(t *testing.T) {
	for in, want := range map[string]string{"15.18": "15", "17": "17", "9.6.24": "9.6", "10.1": "10"} {
		if got := majorOf(in); got != want {
			t.Errorf("majorOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFindBinariesNone(t *testing.T) {
	f := finder{
		lookPath: func(string) (string, error) { return "", errors.New("not found") },
		bindir:   func() string { return "" },
		glob:     func(string) ([]string, error) { return nil, nil },
		version:  func(string) (string, error) { return "", errors.New("no postgres") },
	}
	if _, err := findBinaries(context.Background(), f); !errors.Is(err, errNoBinaries) {
		t.Fatalf("findBinaries with nothing installed = %v, want errNoBinaries", err)
	}
}

func TestFindBinariesResolvesToRealBindir(t *testing.T) {
	bin := needLocal(t)
	for _, name := range []string{"postgres", "initdb"} {
		real, err := filepath.EvalSymlinks(filepath.Join(bin.dir, name))
		if err != nil || filepath.Dir(real) != bin.dir {
			t.Errorf("%s in %s resolves to %s (%v): not the real bindir", name, bin.dir, real, err)
		}
	}
	if bin.version == "" || bin.major == "" {
		t.Errorf("no version: %+v", bin)
	}
	t.Logf("found PostgreSQL %s in %s", bin.version, bin.dir)
}

func TestServerDirSkipsWrapperScripts(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"postgres", "initdb"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexec /usr/lib/postgresql/15/bin/"+name+" \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if d, ok := serverDir(dir); ok {
		t.Errorf("serverDir accepted a directory of wrapper scripts: %s", d)
	}
}

func TestServerVersionIsCached(t *testing.T) {
	bin := needLocal(t)
	cache := t.TempDir()
	ctx := context.Background()
	if v, err := cachedServerVersion(ctx, cache, bin.dir); err != nil || v != bin.version {
		t.Fatalf("first call = %q, %v; want %s", v, err, bin.version)
	}
	file := filepath.Join(cache, "learn", versionCacheFile)
	line, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// A planted answer for the same binary is used without running it…
	fields := strings.Fields(string(line))
	fields[3] = "99.1"
	os.WriteFile(file, []byte(strings.Join(fields, " ")+"\n"), 0o600)
	if v, _ := cachedServerVersion(ctx, cache, bin.dir); v != "99.1" {
		t.Errorf("cached version not used: got %q", v)
	}
	// …but not once the binary changed (here: another modification time).
	fields[2] = "1"
	os.WriteFile(file, []byte(strings.Join(fields, " ")+"\n"), 0o600)
	if v, _ := cachedServerVersion(ctx, cache, bin.dir); v != bin.version {
		t.Errorf("stale cache entry used: got %q", v)
	}
}
