package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/learn-idempotency/learn/internal/supervisor"
	"github.com/learn-idempotency/learn/internal/uitest"
)

// benchSessions and benchCopies are the workshop the benchmark runs: 30
// attendees at once, each racing 10 copies of one booking.
const (
	benchSessions = 30
	benchCopies   = 10
	benchCode     = "bench-code"
)

// BenchmarkWorkshopThirtyRaces runs learn workshop (the built binary, with
// its own PostgreSQL, as a presenter would) and 30 SSH sessions at once
// (golang.org/x/crypto/ssh, each with a virtual terminal), each opening
// the race and firing 10 copies. Every session's race must book exactly
// once: 10 answers of 200, one booking id, one row, 2 seats. It reports,
// per session, the time from dialling to the first frame of the race
// screen (mean and slowest) against one session alone in the same run
// (the baseline, like for like), and the memory of the workshop's process
// (its resident set, read from /proc) per session connected in the first
// round, with the process's peak then.
//
//	go test -run '^$' -bench BenchmarkWorkshopThirtyRaces -benchtime 1x ./cmd/learn
func BenchmarkWorkshopThirtyRaces(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the memory of the workshop's process is read from /proc")
	}
	bin := filepath.Join(b.TempDir(), "learn")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	dir := b.TempDir()
	cmd := exec.Command(bin, "workshop", "--addr", "127.0.0.1:0", "--code", benchCode, "--max-attendees", strconv.Itoa(benchSessions),
		"--host-key", filepath.Join(dir, "key"), "--summary-dir", dir, "--postgres", "local")
	// Unsupervised: the process measured is the workshop itself.
	cmd.Env = append(os.Environ(), supervisor.EnvChild+"=1", "XDG_STATE_HOME="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait() // it removes its PostgreSQL before it exits
	}()
	lines := bufio.NewScanner(stdout)
	port := ""
	for port == "" && lines.Scan() {
		if m := regexp.MustCompile(`ssh -p (\d+) 127\.0\.0\.1`).FindStringSubmatch(lines.Text()); m != nil {
			port = m[1]
		}
	}
	if port == "" {
		b.Fatal("learn workshop never printed its ssh line")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	addr := "127.0.0.1:" + port

	var alone, crowd []time.Duration
	var perSession float64 // KiB
	var peak int64         // KiB
	for i := range b.N {
		// The baseline: one session alone, the same race.
		// Each round's room comes from an address of its own (127.0.0.N):
		// a room at once from one address is what the workshop limits.
		from := fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250)
		s, err := raceSession(from, addr, fmt.Sprintf("alone%d", i))
		if err != nil {
			b.Fatal(err)
		}
		alone = append(alone, s.firstFrame)
		s.close()

		before := rss(b, cmd.Process.Pid, "VmRSS")
		sessions := make([]*benchSession, benchSessions)
		errs := make([]error, benchSessions)
		var wg sync.WaitGroup
		for n := range benchSessions {
			wg.Go(func() { sessions[n], errs[n] = raceSession(from, addr, fmt.Sprintf("a%d-%d", i, n)) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Error(err)
			}
		}
		if b.Failed() {
			b.FailNow()
		}
		if i == 0 {
			// The first round only: later ones reuse the memory that the
			// earlier ones freed, which the process keeps.
			perSession = float64(rss(b, cmd.Process.Pid, "VmRSS")-before) / benchSessions
			peak = rss(b, cmd.Process.Pid, "VmHWM")
		}
		for _, s := range sessions {
			crowd = append(crowd, s.firstFrame)
			s.close()
		}
	}
	b.StopTimer()
	mean := func(ds []time.Duration) float64 {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return float64(sum.Milliseconds()) / float64(len(ds))
	}
	b.ReportMetric(mean(crowd), "ms-first-frame/session")
	b.ReportMetric(float64(slices.Max(crowd).Milliseconds()), "ms-first-frame-slowest")
	b.ReportMetric(mean(alone), "ms-first-frame-alone")
	b.ReportMetric(mean(crowd)/mean(alone), "x-first-frame-vs-alone")
	b.ReportMetric(perSession/1024, "MiB-RSS/session")
	b.ReportMetric(float64(peak)/1024, "MiB-RSS-peak")
}

// benchSession is one attendee's session, with its race run and checked.
type benchSession struct {
	client     *gossh.Client
	firstFrame time.Duration
}

func (s *benchSession) close() { _ = s.client.Close() }

// raceSession connects as user, opens the race (ssh … race), waits for its
// first frame, fires 10 copies and checks that they booked exactly once.
// The session stays connected until close.
func raceSession(from, addr, user string) (*benchSession, error) {
	start := time.Now()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: time.Minute}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: dial from %s: %w", user, from, err)
	}
	c, chans, reqs, err := gossh.NewClientConn(conn, addr, &gossh.ClientConfig{User: user, Auth: []gossh.AuthMethod{gossh.Password(benchCode)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: time.Minute})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: ssh: %w", user, err)
	}
	client := gossh.NewClient(c, chans, reqs)
	s := &benchSession{client: client}
	fail := func(err error) (*benchSession, error) {
		client.Close()
		return nil, fmt.Errorf("%s: %w", user, err)
	}
	sess, err := client.NewSession()
	if err != nil {
		return fail(err)
	}
	emu := uitest.NewScreen(100, 30)
	stdin, err := sess.StdinPipe()
	if err != nil {
		return fail(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	var stderr strings.Builder
	var mu sync.Mutex
	sess.Stderr = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return stderr.Write(p) })
	go func() { _, _ = io.Copy(stdin, emu.Answers()) }() // the terminal's answers
	ended := make(chan struct{})                         // the session's output has ended
	go func() {
		defer close(ended)
		_, _ = io.Copy(emu, stdout)
	}()
	if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		return fail(err)
	}
	if err := sess.Start("race"); err != nil {
		return fail(err)
	}
	// wait reads the screen again at each of its changes until every one
	// of want is on it.
	wait := func(what string, want ...string) error {
		hung := time.NewTimer(2 * time.Minute) // a hung session, not a slow one
		defer hung.Stop()
		for {
			changed := emu.Changed()
			over := false // the session's output has ended: the screen is final
			select {
			case <-ended:
				over = true
			default:
			}
			scr := emu.String()
			missing := slices.IndexFunc(want, func(w string) bool { return !strings.Contains(scr, w) })
			if missing < 0 {
				return nil
			}
			if !over {
				select {
				case <-changed:
					continue
				case <-ended:
					continue
				case <-hung.C:
				}
			}
			mu.Lock()
			defer mu.Unlock()
			return fmt.Errorf("%s never came (no %q); stderr %q, the screen:\n%s", what, want[missing], stderr.String(), strings.TrimSpace(scr))
		}
	}
	if err := wait("the race's first frame", "Race: copies of one request at once"); err != nil {
		return fail(err)
	}
	s.firstFrame = time.Since(start)
	if _, err := stdin.Write([]byte("\r")); err != nil { // fire the default 10 copies
		return fail(err)
	}
	// Exactly once: every copy answered 200 with the one booking, one row,
	// 2 seats; the screen reads it from the run's report.
	if err := wait("the race's tally", fmt.Sprintf("%d answers (%d of them 200)", benchCopies, benchCopies), "1 distinct booking id (b1)",
		"1 row in PostgreSQL", "2 seats taken"); err != nil {
		return fail(err)
	}
	return s, nil
}

// rss is the workshop process's field of /proc/PID/status (VmRSS, VmHWM)
// in KiB.
func rss(b *testing.B, pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
