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
//     the learner's Go toolchain (every go command in a process group and
//     a work directory of its own); [Start] (instance.go) runs a built
//     module as one API instance on a schema of its own, a process group
//     killed whole, its statements read off its standard output.
//   - [Check] (run.go) judges the ladder with learn check's runner; [Play]
//     (play.go) runs one check row held at each step (the harness's
//     -gate), its statements let go in turns (turns.go), for a screen.
package exercises

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

//go:embed module/*.go module/*.sql
var module embed.FS

// requires are the modules the written module needs, at learn's own
// versions: the learner's Go finds them in its module cache.
var requires = []string{"github.com/google/uuid", "github.com/jackc/pgx/v5"}

// harness are the module's files that are learn's, not the learner's.
var harness = []string{"main.go", "learn.go", "types.go"}

// Write writes the module into dir, which must be empty or missing: the
// harness, and booking.go, client.go and schema.sql as the learner starts
// them, or, with solution, learn's reference solution in their place.
func Write(dir string, solution bool) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return &NotEmptyError{Dir: dir}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{"booking.go": "booking.go", "schema.sql": "schema.sql", "client.go": "client.go"}
	if solution {
		files["booking.go"], files["schema.sql"], files["client.go"] = "solution.go", "solution.sql", "solution_client.go"
	}
	for _, name := range harness {
		files[name] = name
	}
	if err := writeFiles(dir, files); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod()), 0o644)
}

// NotEmptyError is a directory Write will not write into: it holds
// something.
type NotEmptyError struct{ Dir string }

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("%s is not empty: give a new directory for the exercises (or, to put learn's own files back there, --restore)", e.Dir)
}

// Exists says why dir holds no module of the exercises (nil when it
// does): it has no booking.go.
func Exists(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "booking.go")); err != nil {
		return fmt.Errorf("%s holds no exercises (no booking.go): learn exercises init %s writes them", dir, dir)
	}
	return nil
}

// IsModule reports whether dir holds a module learn exercises init wrote:
// learn's harness files (main.go, learn.go, types.go) and the go.mod of
// learn-exercises.
func IsModule(dir string) bool {
	for _, name := range harness {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && strings.HasPrefix(string(b), "module learn-exercises\n")
}

// Restore writes the harness's files (main.go, learn.go, types.go) and
// go.mod into the module in dir again, as learn exercises init wrote them;
// the learner's booking.go, client.go and schema.sql are left as they
// are, and written as they start only when missing.
func Restore(dir string) error {
	if Exists(dir) != nil {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil || !strings.HasPrefix(string(b), "module learn-exercises\n") {
			return fmt.Errorf("%s holds no exercises (no booking.go, and no go.mod of learn-exercises): learn exercises init writes them into a new directory", dir)
		}
	}
	files := map[string]string{}
	for _, name := range harness {
		files[name] = name
	}
	for _, name := range []string{"booking.go", "client.go", "schema.sql"} {
		if _, err := os.Stat(filepath.Join(dir, name)); os.IsNotExist(err) {
			files[name] = name
		}
	}
	if err := writeFiles(dir, files); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod()), 0o644)
}

// writeFiles writes each module file from into dir under the name to.
func writeFiles(dir string, files map[string]string) error {
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
	return nil
}

// goMod is the module's go.mod.
func goMod() string {
	var b strings.Builder
	b.WriteString("module learn-exercises\n\ngo " + MinGo + "\n\nrequire (\n")
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

// MinGo is the oldest Go the module builds with (pgx v5's).
const MinGo = "1.25.0"

// BuildError is a module that does not build: what go printed, file and
// line included.
type BuildError struct {
	Output string
}

func (e *BuildError) Error() string { return e.Output }

// goVersion finds a Go version in what go env GOVERSION printed.
var goVersion = regexp.MustCompile(`\bgo1(\.\d+)*(rc\d+|beta\d+)?\b`)

// cutLine is s on one line, cut short.
func cutLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

// Build builds the module in dir with the go command on PATH into a
// program in dir/.learn, after go mod tidy. A module that does not build
// is a *BuildError holding what the compiler printed; no go command, or
// one older than MinGo, is an error that says what to install.
func Build(ctx context.Context, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("the exercises are built with Go, and there is no go command on PATH: install Go " + MinGo + " or newer (https://go.dev/dl/)")
	}
	vctx, cancel := context.WithTimeout(ctx, goVersionWithin.get())
	defer cancel()
	out, err := goCommand(vctx, goBin, "", nil, "env", "GOVERSION").Output()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if vctx.Err() != nil {
		return "", fmt.Errorf("%s env GOVERSION did not answer within %s: the exercises need a working Go %s or newer (https://go.dev/dl/)", goBin, goVersionWithin.get(), MinGo)
	}
	if err != nil {
		return "", fmt.Errorf("%s env GOVERSION: %w: the exercises need Go %s or newer (https://go.dev/dl/)", goBin, err, MinGo)
	}
	said := strings.TrimSpace(string(out))
	if !strings.HasPrefix(said, "devel") {
		v := goVersion.FindString(said)
		switch {
		case v == "":
			// A Go before 1.16 has no GOVERSION: it prints an empty line.
			return "", fmt.Errorf("the exercises need Go %s or newer, and %s does not say its version (go env GOVERSION printed %q: a Go older than 1.16): install a newer Go (https://go.dev/dl/)", MinGo, goBin, cutLine(said))
		case version.Compare(v, "go"+MinGo) < 0:
			return "", fmt.Errorf("the exercises need Go %s or newer, and %s is %s: install a newer Go (https://go.dev/dl/)", MinGo, goBin, v)
		}
	}
	// go build -o is relative to the command's directory: the program's
	// path is made absolute first, or a relative dir nests it.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(abs, ".learn", "booking-api")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	// The go command's work directories go in one of this build's own,
	// removed after it: a go command stopped midway leaves its own.
	tmp, err := os.MkdirTemp(filepath.Dir(bin), "gotmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", bin, "."}} {
		cmd := goCommand(ctx, goBin, abs, []string{"GOFLAGS=-mod=mod", "GOWORK=off", "GOTMPDIR=" + tmp}, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", &BuildError{Output: fmt.Sprintf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, strings.TrimRight(string(out), "\n"))}
		}
	}
	return bin, nil
}

// goVersionWithin bounds go env GOVERSION: a go command that hangs is
// said so.
var goVersionWithin = durationVar(30 * time.Second)

// goCommand is the go command goBin run with args in dir ("": here), with
// env added (a go.work above the module would take it into a workspace:
// GOWORK=off). Stopped, the go command and the compilers it started go
// together: SIGINT to the group, and what is left after 5 s is killed; a
// learn that is killed takes them with it.
func goCommand(ctx context.Context, goBin, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOTOOLCHAIN=local"), env...)
	cmd.SysProcAttr = deathSignal(groupAttr(), syscall.SIGINT)
	cmd.Cancel = func() error { return stopGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}
