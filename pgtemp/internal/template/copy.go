package template

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
)

// Copying a cluster's tree: CopyTree (a template into a cluster, a
// cluster into a template) and TreeSize.

// CopyTree copies the directory tree src to dst with plain file copies,
// keeping permission bits; dst may exist as an empty directory. src is read
// through its handle only: a symbolic link in it is copied as a link, never
// followed out of src, and a file that is not a regular file by the time it
// is opened (a FIFO swapped in, say) is an error, never a hang. dst must be
// a directory nobody else can write. When chown is not nil it is called on
// every path created. Regular files are copied by a few goroutines, which
// lets the kernel overlap the work (io.Copy uses copy_file_range). It
// stops early with ctx's error when ctx ends.
func CopyTree(ctx context.Context, src *os.Root, dst string, chown func(string) error) error {
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

	// On one file system io.Copy lets the kernel copy (copy_file_range).
	// Across two (a template in the cache copied into /dev/shm) the kernel
	// refuses and os falls back to a copy through a new 32 KiB buffer per
	// file, a thousand buffers of garbage in the app's first second: each
	// worker then reuses one buffer of its own.
	kernelCopy := sameDevice(src, dst)
	workers := min(max(runtime.NumCPU(), 2), 4)
	jobs := make(chan job)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			if !kernelCopy {
				buf = make([]byte, copyBufferSize)
			}
			var first error
			for j := range jobs {
				if first == nil {
					first = ctx.Err()
				}
				if first == nil {
					first = copyFile(src, j.from, j.to, j.mode, chown, buf)
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

// copyBufferSize is the buffer of a copy across file systems.
const copyBufferSize = 64 << 10

// sameDevice reports whether the tree src and the directory dst are on one
// file system (false when either cannot be read: the buffered copy works
// everywhere).
func sameDevice(src *os.Root, dst string) bool {
	a, err := src.Stat(".")
	if err != nil {
		return false
	}
	b, err := os.Stat(dst)
	if err != nil {
		return false
	}
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}

// writerOnly and readerOnly hide ReadFrom and WriteTo, so that
// io.CopyBuffer uses the buffer it is given.
type (
	writerOnly struct{ io.Writer }
	readerOnly struct{ io.Reader }
)

// copyFile copies the regular file from (in src) to to with mode, through
// buf when it is not nil, else by io.Copy.
func copyFile(src *os.Root, from, to string, mode fs.FileMode, chown func(string) error, buf []byte) error {
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
	if buf != nil {
		_, err = io.CopyBuffer(writerOnly{out}, readerOnly{in}, buf)
	} else {
		_, err = io.Copy(out, in)
	}
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

// TreeSize adds up the sizes of the regular files under dir.
func TreeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
