package exercises

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/learn-idempotency/learn/internal/tailbuf"
)

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
