//go:build unix

package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// namesAndModes is what a directory holds, each name with its mode, without
// opening anything (a named pipe would block a read).
func namesAndModes(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Name() + " " + fi.Mode().String() + "\n")
	}
	return b.String()
}

// The hostile trial: a named pipe in place of the progress file hung learn
// for ever in open(2) (no signal ended it), a symlink to /dev/zero made it
// die out of memory, and a 400 MB file was read whole without a word. Now
// every reader (the app's Load and Update, learn progress's Peek, export)
// refuses whatever is not a regular file, and a file over MaxFileSize,
// with one line saying what is there and what to do, as for a directory;
// the file is left where it is, and nothing is created beside it but the
// lock.
func TestStoreRefusesWhatIsNotAProgressFile(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, path string)
		want string // in every error
	}{
		{"a named pipe", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "it is a named pipe (FIFO), not a regular file"},
		{"a symlink to /dev/zero", func(t *testing.T, path string) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "it is a symlink to /dev/zero, a device, not a regular file"},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "it is a directory, not a regular file"},
		{"a file one byte over the cap", func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			// Sparse: the size without the disk.
			if err := f.Truncate(MaxFileSize + 1); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}, "it is 4,194,305 bytes, more than the 4 MiB a progress file may be"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
				t.Fatal(err)
			}
			c.make(t, s.Path)
			before := namesAndModes(t, filepath.Dir(s.Path))
			_, _, loadErr := s.Load()
			_, _, peekErr := s.Peek()
			exportErr := s.Export(&bytes.Buffer{})
			_, updateErr := s.Update(func(p *Progress) error { p.MarkRead("retries", fixedNow); return nil })
			for who, err := range map[string]error{"Load": loadErr, "Peek": peekErr, "Export": exportErr, "Update": updateErr} {
				if err == nil {
					t.Errorf("%s: no error", who)
					continue
				}
				msg := err.Error()
				if !strings.Contains(msg, c.want) || !strings.HasSuffix(msg, "move it away, or set XDG_STATE_HOME to another directory") ||
					strings.Count(msg, s.Path) != 1 || strings.Contains(msg, "\n") || saysGo(msg) != "" {
					t.Errorf("%s: %q; want one line saying %q and what to do", who, msg, c.want)
				}
			}
			after := strings.ReplaceAll(namesAndModes(t, filepath.Dir(s.Path)), FileName+".lock -rw-------\n", "")
			if after != before {
				t.Errorf("the state directory changed:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// The cap is on the file, not on what learn writes: a progress file of
// exactly MaxFileSize bytes is still read.
func TestStoreReadsAFileOfExactlyTheCap(t *testing.T) {
	s := newStore(t)
	body := `{"version": 2, "read": {"idempotency": "2026-03-01T10:00:00Z"}}`
	writeProgress(t, s, body+strings.Repeat(" ", MaxFileSize-len(body)), 0o600)
	p, _, err := s.Peek()
	if err != nil || !p.IsRead("idempotency") {
		t.Fatalf("Peek of a %d-byte file: %v, read %v", MaxFileSize, err, p.Read)
	}
}

// A named pipe in the lock file's place does not hang a save either: the
// lock file is opened without blocking too, and the save goes on.
func TestStoreLockOnANamedPipeDoesNotHang(t *testing.T) {
	s := newStore(t)
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(s.Path+".lock", 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Update(func(p *Progress) error { p.MarkRead("retries", fixedNow); return nil })
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Update with a named pipe for a lock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Update still waits 10 s on a named pipe in the lock file's place: open(2) blocks")
	}
	p, _, err := s.Load()
	if err != nil || !p.IsRead("retries") {
		t.Fatalf("after the save: %v, read retries %v; want it saved", err, err == nil && p.IsRead("retries"))
	}
}
