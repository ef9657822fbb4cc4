package workshop

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/pgfault"
	"github.com/learn-idempotency/learn/pgtemp"
)

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Start broken at each of its steps returns the cause and leaves nothing:
// the address is free again, and no schema of its is in the database.
func TestStartThatFailsLeavesNothing(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage_key")
	if err := os.WriteFile(garbage, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	rows := []struct {
		name string
		cfg  func(t *testing.T, cfg *Config, cancel context.CancelFunc)
		want string
	}{
		{"the address is taken", func(_ *testing.T, cfg *Config, _ context.CancelFunc) { cfg.Addr = taken.Addr().String() }, "is already in use"},
		{"PostgreSQL cannot be reached", func(_ *testing.T, cfg *Config, _ context.CancelFunc) {
			cfg.Postgres.DatabaseURL = "postgres://learn@127.0.0.1:1/learn?connect_timeout=2"
		}, "127.0.0.1"},
		{"ended while PostgreSQL starts", func(_ *testing.T, _ *Config, cancel context.CancelFunc) { cancel() }, context.Canceled.Error()},
		{"max_connections cannot be read", func(t *testing.T, cfg *Config, _ context.CancelFunc) {
			proxy := pgfault.Start(t, testDB.ConnString(), pgfault.Rule{Match: "max_connections", Action: pgfault.Drop})
			url, err := proxy.ConnString(testDB.ConnString())
			if err != nil {
				t.Fatal(err)
			}
			cfg.Postgres.DatabaseURL = url
		}, "could not read max_connections"},
		{"too few connections for one run", func(_ *testing.T, cfg *Config, _ context.CancelFunc) { cfg.Connections = 3 }, "too few for even one run"},
		{"no directory for the host key", func(_ *testing.T, cfg *Config, _ context.CancelFunc) { cfg.HostKey = "/dev/null/learn/key" }, "cannot keep the host key"},
		{"the host key is not a key", func(_ *testing.T, cfg *Config, _ context.CancelFunc) { cfg.HostKey = garbage }, "pass --host-key with the key file learn made"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			before := otherSchemas(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			summaries, markers := t.TempDir(), t.TempDir()
			cfg := Config{Addr: freeAddr(t), Code: testCode, HostKey: filepath.Join(t.TempDir(), "key"),
				Postgres:   pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: testDB.ConnString()},
				SummaryDir: summaries, markers: markers}
			r.cfg(t, &cfg, cancel)
			w, err := Start(ctx, cfg)
			if err == nil {
				w.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), r.want) && !errors.Is(err, context.Canceled) {
				t.Errorf("Start = %v, want the cause (%q)", err, r.want)
			}
			if cfg.Addr != taken.Addr().String() {
				ln, err := net.Listen("tcp", cfg.Addr)
				if err != nil {
					t.Errorf("the address %s is still taken: %v", cfg.Addr, err)
				} else {
					ln.Close()
				}
			}
			if left := slices.DeleteFunc(otherSchemas(t), func(s string) bool { return slices.Contains(before, s) }); len(left) != 0 {
				t.Errorf("schemas left: %v", left)
			}
			for _, d := range []string{summaries, markers} {
				if left, _ := os.ReadDir(d); len(left) != 0 {
					t.Errorf("files left in %s: %v", d, left)
				}
			}
		})
	}
}

// Close right after Start ends the workshop, however soon: the server's
// Serve may not have taken the listener in yet (a Shutdown before it
// left Serve accepting for ever, and Close waiting on it).
func TestCloseRightAfterStart(t *testing.T) {
	for range 30 {
		w, err := Start(t.Context(), Config{Addr: "127.0.0.1:0", Server: testDB, Code: testCode, HostKey: filepath.Join(t.TempDir(), "key")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Err(); err != nil {
			t.Fatalf("serving after Close: %v", err)
		}
	}
}

// A host key file that is there but cannot be used (not a key, a public
// key, empty, a directory, a system file) stops the workshop before it
// starts, with what to pass instead; the file is left exactly as it was,
// and the error never advises removing it: learn did not make it.
func TestUnusableHostKeyIsLeftAsItIsAndNeverAdvisedRemoved(t *testing.T) {
	dir := t.TempDir()
	pub := filepath.Join(dir, "id.pub")
	if err := os.WriteFile(pub, []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGtW0cUv3Lx6bQ2v8bY1n1q2hX8yX0C2d7b0g6b2xq3o ada@laptop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "passwd")
	if err := os.WriteFile(text, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a-directory")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	paths := []string{pub, text, empty, sub}
	if _, err := os.Stat("/etc/passwd"); err == nil {
		paths = append(paths, "/etc/passwd")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			before := snapshotFile(t, path)
			w, err := Start(t.Context(), Config{Addr: "127.0.0.1:0", Server: testDB, Code: testCode, HostKey: path})
			if err == nil {
				w.Close()
				t.Fatalf("Start with the host key %s succeeded", path)
			}
			msg := err.Error()
			if words := strings.ToLower(strings.ReplaceAll(msg, path, "PATH")); strings.Contains(words, "remove") || strings.Contains(words, "delete") {
				t.Errorf("the error advises removing a file learn did not make: %v", err)
			}
			if !strings.Contains(msg, "the host key "+path+" cannot be used") || !strings.Contains(msg, "pass --host-key with") {
				t.Errorf("the error does not say which file and what to pass instead: %v", err)
			}
			if after := snapshotFile(t, path); after != before {
				t.Errorf("%s was changed: before %s, after %s", path, before, after)
			}
			if _, err := os.Stat(path + ".pub"); err == nil && path != pub {
				t.Errorf("a public key was written beside %s", path)
			}
		})
	}
}

// snapshotFile is what a file is: its mode, size and contents (a
// directory: its mode and entries).
func snapshotFile(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%v %d entries", fi.Mode(), len(entries))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%v %d %x", fi.Mode(), len(data), sha256.Sum256(data))
}
