//go:build linux

package template

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

func TestCopyTreeKeepsModes(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "base", "1"), 0o700)
	os.WriteFile(filepath.Join(src, "PG_VERSION"), []byte("15\n"), 0o600)
	os.WriteFile(filepath.Join(src, "base", "1", "1259"), make([]byte, 3<<20), 0o640)
	os.WriteFile(filepath.Join(src, "base", "1", "empty"), nil, 0o600)
	os.Symlink("base", filepath.Join(src, "link"))
	os.Chmod(filepath.Join(src, "base"), 0o750)

	dst := filepath.Join(t.TempDir(), "copy")
	if err := CopyTree(context.Background(), openRoot(t, src), dst, nil); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(src, func(path string, fi os.FileInfo, walkErr error) error {
		if walkErr != nil {
			t.Fatal(walkErr)
		}
		rel, _ := filepath.Rel(src, path)
		got, err := os.Lstat(filepath.Join(dst, rel))
		if err != nil {
			t.Errorf("%s not copied: %v", rel, err)
			return nil
		}
		if got.Mode() != fi.Mode() || (fi.Mode().IsRegular() && got.Size() != fi.Size()) {
			t.Errorf("%s: mode %v size %d, want %v size %d", rel, got.Mode(), got.Size(), fi.Mode(), fi.Size())
		}
		return nil
	})
}

func TestCopyTreeStopsWhenCancelled(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a"), []byte("x"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := CopyTree(ctx, openRoot(t, src), filepath.Join(t.TempDir(), "copy"), nil); err != context.Canceled {
		t.Fatalf("CopyTree with a cancelled context = %v", err)
	}
}

// TestSaveTemplateRace: several learn processes making the same template at
// once all succeed and leave one complete template and no temporary copies.
func TestSaveTemplateRace(t *testing.T) {
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "global"), 0o700)
	os.WriteFile(filepath.Join(data, "PG_VERSION"), []byte("15\n"), 0o600)
	os.WriteFile(filepath.Join(data, "global", "pg_control"), make([]byte, 8192), 0o600)
	cache := t.TempDir()
	tmpl := Path(cache, "15", 1000)

	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = Save(context.Background(), openRoot(t, data), tmpl, i == 0) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Save %d: %v", i, err)
		}
	}
	if !Usable(tmpl, "15") {
		t.Errorf("no usable template after the race")
	}
	if left, _ := filepath.Glob(tmpl + ".*"); len(left) > 0 {
		t.Errorf("temporary copies left: %v", left)
	}
}

// openRoot opens dir as an os.Root, closed when the test ends.
func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestCopyAcrossFileSystemsReusesABuffer: copying a template into another
// file system (the cache into /dev/shm, where the kernel's copy refuses)
// allocates no buffer per file. os's fallback allocated 32 KiB for each of
// a template's thousand files, the heap's peak in the app's first second.
func TestCopyAcrossFileSystemsReusesABuffer(t *testing.T) {
	src := t.TempDir()
	shm, err := os.MkdirTemp("/dev/shm", "learn-copy-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	root := openRoot(t, src)
	if sameDevice(root, shm) {
		t.Skip("the temporary directory and /dev/shm are one file system here")
	}
	const files = 200
	for i := range files {
		os.WriteFile(filepath.Join(src, "f"+strconv.Itoa(i)), make([]byte, 9000), 0o600)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := CopyTree(context.Background(), root, filepath.Join(shm, "copy"), nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	perFile := (after.TotalAlloc - before.TotalAlloc) / files
	if perFile > 8<<10 {
		t.Errorf("copying %d files across file systems allocated %d bytes per file, want under 8 KiB (no buffer per file)", files, perFile)
	}
}
