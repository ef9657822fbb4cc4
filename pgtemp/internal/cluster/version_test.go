package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needBinaries returns the newest PostgreSQL server binaries Debian's or
// the PATH's postgres leads to, or skips (the local way's own search is
// package local's).
func needBinaries(t testing.TB) Binaries {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if p, err := exec.LookPath("postgres"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(r))
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if v, err := ServerVersion(context.Background(), dirs[i]); err == nil {
			return Binaries{Dir: dirs[i], Version: v, Major: MajorOf(v)}
		}
	}
	t.Skip("no PostgreSQL server binaries")
	return Binaries{}
}

func TestMajorOf(t *testing.T) {
	for in, want := range map[string]string{"15.18": "15", "17": "17", "9.6.24": "9.6", "10.1": "10"} {
		if got := MajorOf(in); got != want {
			t.Errorf("MajorOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestServerVersionIsCached(t *testing.T) {
	bin := needBinaries(t)
	cache := t.TempDir()
	ctx := context.Background()
	if v, err := CachedVersion(ctx, cache, bin.Dir); err != nil || v != bin.Version {
		t.Fatalf("first call = %q, %v; want %s", v, err, bin.Version)
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
	if v, _ := CachedVersion(ctx, cache, bin.Dir); v != "99.1" {
		t.Errorf("cached version not used: got %q", v)
	}
	// …but not once the binary changed (here: another modification time).
	fields[2] = "1"
	os.WriteFile(file, []byte(strings.Join(fields, " ")+"\n"), 0o600)
	if v, _ := CachedVersion(ctx, cache, bin.Dir); v != bin.Version {
		t.Errorf("stale cache entry used: got %q", v)
	}
}
