package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Binaries is a directory holding a usable initdb and postgres.
type Binaries struct {
	Dir     string // absolute, symlinks resolved
	Version string // e.g. "15.18"
	Major   string // e.g. "15"; "9.6" before PostgreSQL 10
}

var serverVersionRE = regexp.MustCompile(`\(PostgreSQL\) ([0-9]+(?:\.[0-9]+)*)`)

// ServerVersion runs `postgres --version` (allowed as root) and returns e.g. "15.18".
func ServerVersion(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "postgres"), "--version")
	cmd.Env = ServerEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("postgres --version failed: %v: %s", err, strings.TrimSpace(out.String()))
	}
	m := serverVersionRE.FindStringSubmatch(out.String())
	if m == nil {
		return "", fmt.Errorf("postgres --version printed %q, not a PostgreSQL version", strings.TrimSpace(out.String()))
	}
	return m[1], nil
}

// MajorOf returns the major version: "15" for 15.18, "9.6" for 9.6.24.
func MajorOf(version string) string {
	parts := strings.Split(version, ".")
	if n, err := strconv.Atoi(parts[0]); err == nil && n < 10 && len(parts) > 1 {
		return parts[0] + "." + parts[1]
	}
	return parts[0]
}

// ServerEnv is the environment for PostgreSQL programs: learn's own without
// the PG* variables (PGPORT, PGDATA… would change what the server does) and
// with the C locale, so messages in errors are English and no locale is needed.
func ServerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "LANG=C")
}
