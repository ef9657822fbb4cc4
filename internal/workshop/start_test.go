package workshop

import (
	"context"
	"errors"
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
		{"the host key is not a key", func(_ *testing.T, cfg *Config, _ context.CancelFunc) { cfg.HostKey = garbage }, "remove the file to make a new one"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			before := otherSchemas(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			cfg := Config{Addr: freeAddr(t), Code: testCode, HostKey: filepath.Join(t.TempDir(), "key"),
				Postgres: pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: testDB.ConnString()}}
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
