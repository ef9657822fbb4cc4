package supervisor

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// envTestChild tells the test binary, started as the child, what to do.
const envTestChild = "SUPERVISOR_TEST_CHILD"

// TestMain doubles as the child: with envTestChild set, the test binary
// plays a learn that exits, crashes or is killed in the way named.
func TestMain(m *testing.M) {
	what := os.Getenv(envTestChild)
	if what == "" {
		os.Exit(m.Run())
	}
	if what == "parent-await" {
		// The parent of TestChildStartsWhileTheFirstFrameIsDrawn, on its pty.
		os.Setenv(envTestChild, "await")
		code, ok := Run(Config{Path: os.Args[0], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, FullScreen: true,
			FirstFrame: func(w io.Writer) bool {
				b := make([]byte, 1)
				for b[0] != 'g' {
					if _, err := os.Stdin.Read(b); err != nil {
						return false
					}
				}
				_, _ = io.WriteString(w, "FRAME\r\n")
				return true
			}})
		fmt.Printf("exit %d %v\r\n", code, ok)
		os.Exit(0)
	}
	if !IsChild() {
		fmt.Fprintln(os.Stderr, "the child is not marked", EnvChild)
		os.Exit(99)
	}
	switch what {
	case "await":
		// The parent draws its first frame meanwhile: the pipe's end has
		// not come yet when the child is already running.
		fd, _ := strconv.Atoi(os.Getenv(EnvFirstFrameFD))
		pending := "no pipe"
		if fd >= 3 {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if n, err := unix.Poll(fds, 0); err == nil && n == 0 {
				pending = "frame pending"
			}
		}
		fmt.Print("started:" + pending + "\r\n")
		AwaitFirstFrame()
		fmt.Print("after\r\n")
		os.Exit(0)
	case "exit3":
		fmt.Fprintln(os.Stderr, "child: nothing to do")
		os.Exit(3)
	case "panic":
		go func() { panic("boom") }()
		select {}
	case "injected":
		crashAfter(time.Millisecond, EnvCrashAfter+"=1ms")
		select {}
	case "sigquit", "sigkill", "sigint", "sighup":
		// sigint and sighup: the person's signal came before learn caught it.
		sig := map[string]syscall.Signal{"sigquit": syscall.SIGQUIT, "sigkill": syscall.SIGKILL,
			"sigint": syscall.SIGINT, "sighup": syscall.SIGHUP}[what]
		_ = syscall.Kill(os.Getpid(), sig)
		select {}
	case "sigpipe":
		// The reader of standard output is gone (learn demo | head): Go
		// dies of SIGPIPE on the first write.
		for {
			fmt.Println("a line nobody reads")
		}
	case "stderr-gone":
		// learn serve 2>&1 | grep, and grep has gone: learn ignores
		// SIGPIPE and logs on; the parent must take every line all the
		// same, or the child would fail (or block) writing its log.
		signal.Ignore(syscall.SIGPIPE)
		for i := range 5000 {
			if _, err := fmt.Fprintf(os.Stderr, "log line %d, longer than a pipe's buffer all together\n", i); err != nil {
				os.Exit(4)
			}
		}
		os.Exit(0)
	case "sigterm":
		// Wait for the signal the parent relays, then exit as learn does.
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		fmt.Println("ready")
		<-ch
		fmt.Fprintln(os.Stderr, "child: stopped cleanly")
		os.Exit(143)
	}
	os.Exit(98)
}

// result is what one supervised run gave.
type result struct {
	code   int
	ok     bool
	stderr string
	reaped int // calls of Reap
}

// supervise runs the test binary as a child acting out what, with Reap
// reporting one removed thing, and returns what the parent gave. ready,
// when not nil, is called once the child has printed "ready".
func supervise(t *testing.T, what string, ready func()) result {
	t.Helper()
	t.Setenv(envTestChild, what)
	t.Setenv(EnvCrashAfter, "1ms")
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(errR)
		stderr <- string(b)
	}()
	stdout := make(chan struct{})
	if what == "sigpipe" {
		outR.Close() // nobody reads what the child prints
	}
	if what == "stderr-gone" {
		errR.Close() // nobody reads what the child logs
	}
	go func() {
		defer close(stdout)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			if sc.Text() == "ready" && ready != nil {
				ready()
			}
		}
	}()
	var r result
	r.code, r.ok = Run(Config{
		Path: os.Args[0], Stdin: stdin, Stdout: outW, Stderr: errW,
		Reap: func(ctx context.Context, logf func(string, ...any)) error {
			r.reaped++
			if _, ok := ctx.Deadline(); !ok {
				t.Error("Reap got a context without a deadline")
			}
			logf("removed the cluster in %s", "/tmp/learn-test")
			return nil
		},
	})
	outW.Close()
	errW.Close()
	<-stdout
	r.stderr = <-stderr
	outR.Close()
	errR.Close()
	return r
}

func TestRun(t *testing.T) {
	tests := []struct {
		what   string
		code   int
		reap   bool // Reap is called
		crash  bool
		stderr []string
	}{
		{"exit3", 3, false, false, []string{"child: nothing to do"}},
		{"panic", 2, true, true, []string{"panic: boom", "learn crashed (process ", "and what it left is removed:\n  removed the cluster in /tmp/learn-test\n", "Please report the panic above."}},
		{"injected", 2, true, true, []string{"panic: injected crash (LEARN_CRASH_AFTER=1ms)", "learn crashed (process "}},
		{"sigquit", 2, true, true, []string{"SIGQUIT", "goroutine ", "learn crashed (process "}},
		{"sigkill", 128 + 9, true, true, []string{"learn was killed (process "}},
		{"sigpipe", 128 + 13, false, false, nil},
		{"stderr-gone", 0, false, false, nil},
		// Ctrl-C or a hangup before learn caught it: an interrupt, said in
		// learn's words, and what the child made is removed all the same.
		{"sigint", 130, true, false, []string{"learn: interrupted\n", "  removed the cluster in /tmp/learn-test\n"}},
		{"sighup", 129, true, false, []string{"learn: hangup\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			r := supervise(t, tt.what, nil)
			if !r.ok || r.code != tt.code {
				t.Errorf("Run = %d, %v; want %d, true\nstderr:\n%s", r.code, r.ok, tt.code, r.stderr)
			}
			if reaped := r.reaped > 0; reaped != tt.reap || r.reaped > 1 {
				t.Errorf("Reap called %d times, want it called: %v", r.reaped, tt.reap)
			}
			if !tt.crash && (strings.Contains(r.stderr, "crashed") || strings.Contains(r.stderr, "killed")) {
				t.Errorf("no crash, yet:\n%s", r.stderr)
			}
			// Standard input and output are no terminal here: nothing
			// was restored, and nothing says it was.
			if strings.Contains(r.stderr, "terminal") {
				t.Errorf("a child without a terminal, yet the parent speaks of one:\n%s", r.stderr)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
		})
	}
}

// A SIGTERM to the parent reaches the child, which stops as it chooses;
// the parent passes its code on and reaps nothing.
func TestRunRelaysSignals(t *testing.T) {
	r := supervise(t, "sigterm", func() { _ = syscall.Kill(os.Getpid(), syscall.SIGTERM) })
	if !r.ok || r.code != 143 || r.reaped != 0 || !strings.Contains(r.stderr, "child: stopped cleanly") {
		t.Errorf("Run = %d, %v, reaped %d\nstderr:\n%s", r.code, r.ok, r.reaped, r.stderr)
	}
}

func TestRunInTheChildDoesNothing(t *testing.T) {
	t.Setenv(EnvChild, "1")
	if code, ok := Run(Config{Path: "/nonexistent/learn"}); ok || code != 0 {
		t.Errorf("Run in the child = %d, %v; want 0, false", code, ok)
	}
}

func TestRunWithoutAProgramRunsInProcess(t *testing.T) {
	t.Setenv(EnvChild, "")
	if code, ok := Run(Config{Path: "/nonexistent/learn", Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}); ok || code != 0 {
		t.Errorf("Run of a missing program = %d, %v; want 0, false", code, ok)
	}
}

// Every mode the reset turns off has a sequence of its own: tmux 3.3 drops
// a DECRST whose parameters pass 64 bytes (and every mode in it), so the
// one sequence of seventeen modes this reset used to send left the mouse
// on in the shell after a crash. Each CSI sequence here carries at most
// two parameters (DECSCUSR's, kitty's flags and mode).
func TestTerminalResetSendsEachModeOnItsOwn(t *testing.T) {
	csi := regexp.MustCompile(`\x1b\[([<=>?]?)([0-9;]*)([ -/]*[@-~])`)
	found := map[string]bool{}
	for _, m := range csi.FindAllStringSubmatch(terminalReset, -1) {
		params := strings.Split(m[2], ";")
		if len(params) > 2 {
			t.Errorf("the sequence %q carries %d parameters; terminals cap them", m[0], len(params))
		}
		if m[1] == "?" && m[3] == "l" {
			found[m[2]] = true
		}
	}
	for _, mode := range []string{"1000", "1002", "1003", "1006", "2004", "1004", "1049"} {
		if !found[mode] {
			t.Errorf("no DECRST of mode %s in the reset %q", mode, terminalReset)
		}
	}
}

// A build without the learnfaults tag (a release) has no fault hooks:
// LEARN_CRASH_AFTER in the environment starts nothing.
func TestAReleaseBuildHasNoFaultHooks(t *testing.T) {
	if FaultHooks {
		t.Skip("built with the learnfaults tag: its hooks are meant to be there")
	}
	t.Setenv(EnvCrashAfter, "1h")
	before := runtime.NumGoroutine()
	InjectCrash()
	if n := runtime.NumGoroutine(); n != before {
		t.Errorf("InjectCrash started %d goroutines in a release build, want none", n-before)
	}
}

// The child of a full-screen run starts while the parent draws its first
// frame, and writes nothing to the terminal before the frame is drawn: its
// own frame never goes under the parent's. The parent is the test binary
// on a pty of its own (the terminal's foreground, as learn is at a
// shell); its first frame waits for a key the test types once the child
// has said it runs.
func TestChildStartsWhileTheFirstFrameIsDrawn(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envTestChild+"=parent-await")
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	var lines []string
	sc := bufio.NewScanner(ptmx)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		lines = append(lines, l)
		if strings.HasPrefix(l, "started:") {
			_, _ = io.WriteString(ptmx, "g") // the first frame may be drawn now
		}
		if l == "after" || strings.HasPrefix(l, "exit") {
			break
		}
	}
	_ = cmd.Wait()
	_, _ = io.Copy(io.Discard, ptmx) // to the end (EIO): a pty closed unread holds Close up
	got := strings.Join(lines, "|")
	if !strings.Contains(got, "started:frame pending|") || !strings.Contains(got, "FRAME|") || strings.Index(got, "FRAME") > strings.Index(got, "after") {
		t.Errorf("the terminal got %q, want the child started while the frame was pending, then FRAME, then the child's after", got)
	}
}
