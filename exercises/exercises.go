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
//   - [Check] (run.go) judges the ladder with learn check's runner; [Play]
//     (play.go) runs one check row held at each step (the harness's
//     -gate), its statements let go in turns (turns.go), for a screen.
package exercises

import (
	"bufio"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"go/version"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/learn-idempotency/learn/internal/tailbuf"
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

// Instance is one running API instance of a built module.
type Instance struct {
	URL    string
	cmd    *exec.Cmd
	stderr *tailbuf.Buffer
	exited chan struct{} // closed once the process has ended
	synced chan string   // the tokens of learn-sync lines read
	syncs  int
}

// sync returns once every statement the instance reported before now has
// been read (GET /learn/sync, whose line comes after them), or after 2 s
// for an instance that does not answer.
func (i *Instance) sync(ctx context.Context) {
	i.syncs++
	token := fmt.Sprint(i.syncs)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, i.URL+"/learn/sync?token="+token, nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	resp.Body.Close()
	for {
		select {
		case t := <-i.synced:
			if t == token {
				return
			}
		case <-ctx.Done():
			return
		case <-i.exited:
			return
		}
	}
}

// Statement is one statement the learner's code sent for one of learn's
// requests, as the harness's tracer reported it (learn.go).
type Statement struct {
	Request  string    `json:"request"` // X-Request-Id: intent.try, or intent.copy.try
	N        int64     `json:"-"`       // the request's number in its process
	Instance string    `json:"instance"`
	SQL      string    `json:"sql"`
	Args     []string  `json:"args,omitempty"`
	Result   string    `json:"result,omitempty"`
	Error    string    `json:"error,omitempty"`
	Crash    bool      `json:"crash,omitempty"`
	Seq      int64     `json:"seq,omitempty"` // its number at the harness's gate, when learn plays the run
	PID      uint32    `json:"pid,omitempty"` // its database connection's backend process
	At       time.Time `json:"at"`
	Took     string    `json:"took"`
}

// maxLine is the longest line of an instance's standard output learn
// reads; the rest of a longer one is dropped, so a program that prints
// without end cannot grow learn's memory.
const maxLine = 64 << 10

// readLine reads one line of at most maxLine bytes (its newline
// included); of a longer line, the rest is read and dropped.
func readLine(rd *bufio.Reader) (string, error) {
	b, err := rd.ReadSlice('\n')
	line := string(b)
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = rd.ReadSlice('\n')
	}
	return line, err
}

// sqlLog gathers the statements the instances report, at most maxLog.
type sqlLog struct {
	mu   sync.Mutex
	list []Statement
}

const maxLog = 50000

func (l *sqlLog) add(s Statement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.list) < maxLog {
		l.list = append(l.list, s)
	}
}

// take returns the statements gathered since the last take.
func (l *sqlLog) take() []Statement {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.list
	l.list = nil
	return out
}

// Start runs the program bin as the API instance name (api-1) on the
// database of connString (with the module's tables) and returns once it
// listens. A program that exits, prints something else first, or does not
// listen within 10 s is stopped, and the error says so with the end of
// what it wrote to standard error.
func Start(ctx context.Context, bin, name, connString string) (*Instance, error) {
	return start(ctx, bin, name, connString, startOptions{})
}

// startOptions are an instance's, past Start's.
type startOptions struct {
	// isolation is the database's default isolation level for the
	// instance's transactions ("" leaves PostgreSQL's).
	isolation string
	// log, when not nil, gathers the statements the instance reports.
	log *sqlLog
	// gate, when set, runs the harness with -gate (learn plays the run)
	// and is told each of its lines: "learn-begin" and "learn-end" of a
	// request, "learn-wait" of a statement held before it is sent, which
	// waits until let is called, and "learn-sql" of a statement done.
	gate func(kind string, s Statement, let func())
}

// start is Start, with opts.
func start(ctx context.Context, bin, name, connString string, opts startOptions) (*Instance, error) {
	args := []string{"-addr", "127.0.0.1:0", "-name", name}
	if opts.isolation != "" {
		args = append(args, "-isolation", opts.isolation)
	}
	if opts.gate != nil {
		args = append(args, "-gate")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+connString)
	// The instance and what the learner's code starts are one process
	// group, killed together (Stop); the kernel kills the instance when
	// learn dies. A process of theirs that keeps standard output or error
	// open after the instance ended holds nothing up past ioWait.
	cmd.SysProcAttr = deathSignal(groupAttr(), syscall.SIGKILL)
	cmd.WaitDelay = ioWait
	inst := &Instance{cmd: cmd, stderr: tailbuf.New(8 << 10), exited: make(chan struct{}), synced: make(chan string, 16)}
	cmd.Stderr = inst.stderr
	out, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	var gate io.WriteCloser
	var gateMu sync.Mutex
	if opts.gate != nil {
		if gate, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("the booking API %s could not start: %w", bin, err)
	}
	said := make(chan string, 1)
	read := make(chan struct{}) // closed once standard output is read to its end
	go func() {
		// Once the instance has ended, its output is read to the end, or
		// for ioWait when something it started still holds it open.
		_ = cmd.Wait()
		select {
		case <-read:
		case <-time.After(ioWait):
			out.Close()
			<-read
		}
		close(inst.exited)
	}()
	go func() {
		defer close(read)
		defer out.Close()
		rd := bufio.NewReaderSize(out, maxLine)
		line, _ := readLine(rd)
		said <- line
		for {
			line, err := readLine(rd)
			if t, ok := strings.CutPrefix(line, "learn-sync "); ok {
				select {
				case inst.synced <- strings.TrimSpace(t):
				default:
				}
			}
			if rest, ok := strings.CutPrefix(line, "learn-sql "); ok && opts.log != nil {
				var st Statement
				if json.Unmarshal([]byte(rest), &st) == nil {
					opts.log.add(st)
				}
			}
			if kind, rest, ok := strings.Cut(line, " "); ok && gate != nil && strings.HasPrefix(kind, "learn-") && kind != "learn-sync" {
				var line struct {
					Statement
					N int64 `json:"n"` // the request's number, which a Statement keeps out of its JSON
				}
				if json.Unmarshal([]byte(rest), &line) == nil {
					st := line.Statement
					st.N = line.N
					opts.gate(kind, st, func() {
						gateMu.Lock()
						defer gateMu.Unlock()
						_, _ = fmt.Fprintf(gate, "go %d\n", st.Seq)
					})
				}
			}
			if err != nil {
				break
			}
		}
	}()
	fail := func(format string, args ...any) (*Instance, error) {
		inst.Stop()
		msg := fmt.Sprintf(format, args...)
		if tail := strings.TrimSpace(inst.stderr.Lines(20)); tail != "" {
			msg += "; it wrote:\n" + tail
		}
		return nil, errors.New(msg)
	}
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case line := <-said:
		u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
		if ok && strings.HasPrefix(u, "http://127.0.0.1:") {
			if err := answersAs(ctx, u, name); err != nil {
				return fail("the booking API (%s) said it listens on %s, but %v: only main.go (learn's) may say where it listens, on the port it was given (restore learn's files with learn exercises init --restore)", name, u, err)
			}
			inst.URL = u
			return inst, nil
		}
		if line == "" {
			<-inst.exited
			return fail("the booking API (%s) exited before it listened (%s)", name, cmd.ProcessState)
		}
		said := strings.TrimSpace(line)
		if len(said) > 120 {
			said = said[:120] + "…"
		}
		return fail("the booking API (%s) printed %q before the harness's \"listening on http://127.0.0.1:PORT\": nothing of yours may print to standard output before main.go does (restore learn's files with learn exercises init --restore)", name, said)
	case <-timer.C:
		return fail("the booking API (%s) did not listen within 10 s", name)
	case <-ctx.Done():
		inst.Stop()
		return nil, ctx.Err()
	}
}

// answersAs checks that what answers at u is the instance called name:
// the harness names its instance on every answer (X-Learn-Instance).
func answersAs(ctx context.Context, u, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"/learn/whoami", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("nothing answers there (%v)", err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Learn-Instance"); got != name {
		return fmt.Errorf("what answers there is not it (X-Learn-Instance %q)", got)
	}
	return nil
}

// Stop ends the instance, with every process it started that stayed in
// its process group, and waits for it.
func (i *Instance) Stop() {
	_ = killGroup(i.cmd)
	_ = i.cmd.Process.Kill() // where the group is gone already
	<-i.exited
}

// ioWait bounds the wait for an instance's standard output and error
// once it has ended.
const ioWait = time.Second

// Exited says how the instance ended, if it has ("" while it runs).
func (i *Instance) Exited() string {
	select {
	case <-i.exited:
		return i.cmd.ProcessState.String()
	default:
		return ""
	}
}

// endedWithin is Exited, waiting up to d for an instance that is ending.
func (i *Instance) endedWithin(d time.Duration) string {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-i.exited:
	case <-t.C:
	}
	return i.Exited()
}

// Stderr is the end of what the instance wrote to standard error.
func (i *Instance) Stderr() string { return i.stderr.Lines(20) }
