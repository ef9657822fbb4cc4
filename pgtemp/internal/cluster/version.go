package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/learn-idempotency/learn/pgtemp/internal/template"
)

// Running `postgres --version` costs about 10 ms (the server links many
// libraries), a tenth of a warm start. So the answer is kept in
// <cache>/learn/postgres-versions, one line per binary:
//
//	<path of postgres> <size> <modification time, ns> <version>
//
// A package upgrade changes size or time, and the binary is asked again.
const versionCacheFile = "postgres-versions"

// CachedVersion returns ServerVersion(dir), from the cache when the
// binary has not changed. A cache that cannot be read or written only costs
// the exec.
func CachedVersion(ctx context.Context, cacheDir, dir string) (string, error) {
	bin := filepath.Join(dir, "postgres")
	fi, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s %d %d", bin, fi.Size(), fi.ModTime().UnixNano())
	if strings.ContainsAny(bin, " \n") {
		return ServerVersion(ctx, dir)
	}
	file := ""
	if root := template.CacheRoot(cacheDir); root != "" {
		file = filepath.Join(root, versionCacheFile)
	}
	var lines []string
	if file != "" {
		if b, err := os.ReadFile(file); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if v, ok := strings.CutPrefix(line, key+" "); ok && v != "" {
					return v, nil
				}
				if line != "" && !strings.HasPrefix(line, bin+" ") {
					lines = append(lines, line)
				}
			}
		}
	}
	v, err := ServerVersion(ctx, dir)
	if err != nil || file == "" {
		return v, err
	}
	lines = append(lines, key+" "+v)
	writeFileAtomic(file, []byte(strings.Join(lines, "\n")+"\n"))
	return v, nil
}

// writeFileAtomic writes a file through a temporary sibling and a rename, so
// concurrent readers see the old or the new content, never a mix.
func writeFileAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".tmp-")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
