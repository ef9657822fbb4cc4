package home

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A home that does not exist, or is a file, is no home: Dir and CacheDir
// say so and name it, and nothing is made there; a home that exists is
// taken, and XDG_CACHE_HOME is taken as it is.
func TestAHomeThatDoesNotExistIsNone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps the cache in %LocalAppData%")
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	for _, h := range []string{filepath.Join(tmp, "nonexistent"), file} {
		t.Setenv("HOME", h)
		if d, err := Dir(); err == nil || !strings.Contains(err.Error(), h) {
			t.Errorf("HOME=%s: Dir() = %q, %v; want an error naming it", h, d, err)
		}
		if d, err := CacheDir(); err == nil || !strings.Contains(err.Error(), h) {
			t.Errorf("HOME=%s: CacheDir() = %q, %v; want an error naming it", h, d, err)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "nonexistent")); !os.IsNotExist(err) {
		t.Errorf("the home that did not exist: %v", err)
	}
	t.Setenv("HOME", tmp)
	if d, err := Dir(); err != nil || d != tmp {
		t.Errorf("HOME=%s: Dir() = %q, %v", tmp, d, err)
	}
	if d, err := CacheDir(); err != nil || !strings.HasPrefix(d, tmp) {
		t.Errorf("HOME=%s: CacheDir() = %q, %v", tmp, d, err)
	}
	xdg := filepath.Join(tmp, "xdg-cache")
	t.Setenv("HOME", filepath.Join(tmp, "nonexistent"))
	t.Setenv("XDG_CACHE_HOME", xdg)
	if d, err := CacheDir(); runtime.GOOS != "darwin" && (err != nil || d != xdg) {
		t.Errorf("XDG_CACHE_HOME=%s: CacheDir() = %q, %v", xdg, d, err)
	}
}
