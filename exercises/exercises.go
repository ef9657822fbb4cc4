// Package exercises is learn's "write it yourself": a Go module in which
// the learner writes the booking transaction, built and run as an API
// instance and judged by learn check's runner, the lesson's scenarios on
// a real PostgreSQL (one judge).
//
//   - module/: the module's files as the learner gets them. main.go and
//     types.go are the harness (an HTTP API in learn serve's shape, which
//     learn check's example config reads); booking.go and schema.sql are
//     the learner's, with a TODO; solution.go (build tag solution) and
//     solution.sql are learn's reference solution, held to every check.
//   - [Write] writes the module into a directory; [Build] builds it with
//     the learner's Go toolchain; [Start] runs a built module as one API
//     instance on a schema of its own.
package exercises

import (
	"bufio"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

//go:embed module/*.go module/*.sql
var module embed.FS

// requires are the modules the written module needs, at learn's own
// versions: the learner's Go finds them in its module cache.
var requires = []string{"github.com/google/uuid", "github.com/jackc/pgx/v5"}

// Write writes the module into dir, which must be empty or missing: the
// harness, and booking.go and schema.sql as the learner starts them, or,
// with solution, learn's reference solution in their place.
func Write(dir string, solution bool) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: give a new directory for the exercises", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{"main.go": "main.go", "types.go": "types.go", "booking.go": "booking.go", "schema.sql": "schema.sql"}
	if solution {
		files["booking.go"], files["schema.sql"] = "solution.go", "solution.sql"
	}
	for to, from := range files {
		b, err := module.ReadFile("module/" + from)
		if err != nil {
			return err
		}
		// The build tags that keep the two in learn's own tree apart.
		s := strings.TrimPrefix(strings.TrimPrefix(string(b), "//go:build solution\n\n"), "//go:build !solution\n\n")
		if err := os.WriteFile(filepath.Join(dir, to), []byte(s), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod()), 0o644)
}

// goMod is the module's go.mod.
func goMod() string {
	var b strings.Builder
	b.WriteString("module learn-exercises\n\ngo 1.26\n\nrequire (\n")
	info, _ := debug.ReadBuildInfo()
	for _, path := range requires {
		version := "latest"
		for _, d := range info.Deps {
			if d.Path == path {
				version = d.Version
			}
		}
		fmt.Fprintf(&b, "\t%s %s\n", path, version)
	}
	b.WriteString(")\n")
	return b.String()
}

// Build builds the module in dir with the go command on PATH into a
// program in dir/.learn, after go mod tidy; its error holds what the
// compiler printed.
func Build(ctx context.Context, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("the exercises are built with Go, and there is no go command on PATH: install Go (https://go.dev/dl/)")
	}
	bin := filepath.Join(dir, ".learn", "booking-api")
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", bin, "."}} {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return bin, nil
}

// Instance is one running API instance of a built module.
type Instance struct {
	URL string
	cmd *exec.Cmd
}

// Start runs the program bin as one API instance on the database of
// connString (with the module's tables) and returns once it listens.
func Start(ctx context.Context, bin, connString string) (*Instance, error) {
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+connString)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	inst := &Instance{cmd: cmd}
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		said <- line
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case line := <-said:
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on "); ok {
			inst.URL = u
			return inst, nil
		}
		inst.Stop()
		return nil, fmt.Errorf("the booking API did not say where it listens (it printed %q)", line)
	case <-time.After(10 * time.Second):
		inst.Stop()
		return nil, errors.New("the booking API did not listen within 10 s")
	case <-ctx.Done():
		inst.Stop()
		return nil, ctx.Err()
	}
}

// Stop ends the instance and waits for it.
func (i *Instance) Stop() {
	_ = i.cmd.Process.Kill()
	_ = i.cmd.Wait()
}
