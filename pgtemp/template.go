package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A cluster template is the data directory of a freshly initdb'd cluster,
// kept under the user cache directory as
//
//	<cache>/learn/pg-template-<major>-<uid of the cluster user>
//
// Copying it takes a fraction of initdb's time, so only the first run pays
// for initdb. A template is only ever created whole: it is copied into a
// sibling directory and renamed into place, so a reader sees either nothing
// or a complete template, and two learn processes racing to create it both
// succeed (the loser discards its copy).

// cacheRoot returns learn's directory in the user cache directory (or in
// cacheDir when set), or "" when there is none.
func cacheRoot(cacheDir string) string {
	if cacheDir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		cacheDir = d
	}
	return filepath.Join(cacheDir, "learn")
}

// templatePath returns where the template for this major version and cluster
// user lives, or "" when there is no user cache directory.
func templatePath(cacheDir, major string, uid int) string {
	root := cacheRoot(cacheDir)
	if root == "" {
		return ""
	}
	return filepath.Join(root, fmt.Sprintf("pg-template-%s-%d", major, uid))
}

// templateUsable reports whether dir looks like a complete cluster of the
// given major version. Whether it really starts is found out by starting it.
func templateUsable(dir, major string) bool {
	v, err := os.ReadFile(filepath.Join(dir, "PG_VERSION"))
	if err != nil || strings.TrimSpace(string(v)) != major {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "global", "pg_control"))
	return err == nil
}

// saveTemplate copies the data directory of a cluster that has never been
// started (straight from initdb), opened as data, to tmpl, replacing a
// broken template when replace is true. data belongs to the cluster user:
// it is read only through the handle, so no link planted in it leads the
// copy out of it (see copyTree). Losing a race to another learn process is
// not an error. When ctx ends it leaves no partial copy behind.
func saveTemplate(ctx context.Context, data *os.Root, tmpl string, replace bool) error {
	parent := filepath.Dir(tmpl)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return err
	}
	removeStale(parent, filepath.Base(tmpl))
	tmp, err := os.MkdirTemp(parent, filepath.Base(tmpl)+".tmp-")
	if err != nil {
		return err
	}
	if err := copyTree(ctx, data, tmp, nil); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if replace {
		discardTemplate(tmpl)
	}
	err = os.Rename(tmp, tmpl)
	if err != nil {
		os.RemoveAll(tmp)
	}
	if errors.Is(err, fs.ErrExist) {
		// Another learn process got there first (EEXIST or ENOTEMPTY); its
		// template comes from a fresh initdb just as ours does.
		return nil
	}
	return err
}

// discardTemplate moves a template out of the way and deletes it. Renaming
// first means no reader ever sees a half-deleted template.
func discardTemplate(tmpl string) {
	old := fmt.Sprintf("%s.old-%d-%d", tmpl, os.Getpid(), time.Now().UnixNano())
	if os.Rename(tmpl, old) == nil {
		os.RemoveAll(old)
	}
}

// removeStale deletes leftovers of template copies that a killed learn
// process did not finish (older than an hour, so never one in progress).
func removeStale(parent, base string) {
	for _, pattern := range []string{base + ".tmp-*", base + ".old-*"} {
		matches, _ := filepath.Glob(filepath.Join(parent, pattern))
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.RemoveAll(m)
			}
		}
	}
}

// copyTree copies the directory tree src to dst with plain file copies,
// keeping permission bits; dst may exist as an empty directory. src is read
// through its handle only: a symbolic link in it is copied as a link, never
// followed out of src, and a file that is not a regular file by the time it
// is opened (a FIFO swapped in, say) is an error, never a hang. dst must be
// a directory nobody else can write. When chown is not nil it is called on
// every path created. Regular files are copied by a few goroutines, which
// lets the kernel overlap the work (io.Copy uses copy_file_range). It
// stops early with ctx's error when ctx ends.
func copyTree(ctx context.Context, src *os.Root, dst string, chown func(string) error) error {
	type job struct {
		from, to string
		mode     fs.FileMode
	}
	var files []job
	err := fs.WalkDir(src.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		to := filepath.Join(dst, filepath.FromSlash(path))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(to, info.Mode().Perm()); err != nil && !(path == "." && errors.Is(err, fs.ErrExist)) {
				return err
			}
			if err := os.Chmod(to, info.Mode().Perm()); err != nil {
				return err
			}
		case d.Type()&fs.ModeSymlink != 0:
			target, err := src.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case d.Type().IsRegular():
			files = append(files, job{path, to, info.Mode().Perm()})
			return nil
		default:
			return nil // sockets and the like are not part of a cluster at rest
		}
		if chown != nil {
			return chown(to)
		}
		return nil
	})
	if err != nil {
		return err
	}

	workers := min(max(runtime.NumCPU(), 2), 4)
	jobs := make(chan job)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var first error
			for j := range jobs {
				if first == nil {
					first = ctx.Err()
				}
				if first == nil {
					first = copyFile(src, j.from, j.to, j.mode, chown)
				}
			}
			errs <- first
		}()
	}
	for _, j := range files {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := ctx.Err(); err != nil {
		return err
	}
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

func copyFile(src *os.Root, from, to string, mode fs.FileMode, chown func(string) error) error {
	in, err := src.OpenFile(from, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is no longer a regular file", from)
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(mode)
	}
	if err == nil && chown != nil {
		err = chown(to)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
