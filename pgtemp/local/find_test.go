//go:build linux

package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp/internal/cluster"
)

func TestCandidatesOrder(t *testing.T) {
	f := Finder{
		LookPath: func(name string) (string, error) {
			if name == "postgres" {
				return "/nonexistent/path/bin/postgres", nil
			}
			return "", errors.New("not found")
		},
		Bindir: func() string { return "/from/pg_config/bin" },
		Glob: func(pattern string) ([]string, error) {
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

func TestFindBinariesNone(t *testing.T) {
	f := Finder{
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Bindir:   func() string { return "" },
		Glob:     func(string) ([]string, error) { return nil, nil },
		Version:  func(string) (string, error) { return "", errors.New("no postgres") },
	}
	if _, err := Find(context.Background(), f); !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("Find with nothing installed = %v, want ErrNoBinaries", err)
	}
}

func TestFindBinariesResolvesToRealBindir(t *testing.T) {
	bin := needLocal(t)
	for _, name := range []string{"postgres", "initdb"} {
		real, err := filepath.EvalSymlinks(filepath.Join(bin.Dir, name))
		if err != nil || filepath.Dir(real) != bin.Dir {
			t.Errorf("%s in %s resolves to %s (%v): not the real bindir", name, bin.Dir, real, err)
		}
	}
	if bin.Version == "" || bin.Major == "" {
		t.Errorf("no Version: %+v", bin)
	}
	t.Logf("found PostgreSQL %s in %s", bin.Version, bin.Dir)
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

// needLocal skips when there are no local binaries.
func needLocal(t testing.TB) cluster.Binaries {
	t.Helper()
	bin, err := Find(context.Background(), SystemFinder(context.Background(), t.TempDir()))
	if err != nil {
		t.Skipf("no local PostgreSQL binaries: %v", err)
	}
	return bin
}
