package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// requireTool finds a program for an end-to-end test. Without it the test is
// skipped, except under CI (LEARN_CI=1), where a missing tool is a failure.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("LEARN_CI") != "" {
			t.Fatalf("%s is needed under CI: %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

// builtLearn is the learn binary of this test run, built once by the
// first test that asks (buildLearn) and removed by TestMain.
var builtLearn struct {
	once sync.Once
	dir  string // where it is built
	path string
	err  error
}

// buildLearn is the learn binary built with the fault hooks of the tests
// (LEARN_CRASH_AFTER, LEARN_SLOW_START: the learnfaults build tag), once
// per test run, as a file of the test's own: a hard link (a copy where
// linking fails) in its temporary directory. The path is the test's own,
// so a test that finds learn's processes by the program they run (pkill
// -f, /proc) finds its own and no other's, whatever runs in parallel.
func buildLearn(t *testing.T) string {
	t.Helper()
	b := &builtLearn
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "learn-test-bin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "learn")
		if out, err := exec.Command("go", "build", "-tags", "learnfaults", "-o", b.path, ".").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	bin := filepath.Join(t.TempDir(), "learn")
	if err := os.Link(b.path, bin); err != nil {
		data, rerr := os.ReadFile(b.path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// removeBuiltLearn removes the binary buildLearn built, once the tests
// are over.
func removeBuiltLearn() {
	if builtLearn.dir != "" {
		_ = os.RemoveAll(builtLearn.dir)
	}
}

// tmuxSession is the built binary running in a detached tmux session.
type tmuxSession struct {
	t     *testing.T
	name  string
	last  string     // the pane as last read, shown when the session is gone
	watch *paneWatch // the pane's changes, heard from the first wait on
	// exits says the pane's script prints EXIT=<code> when its program
	// ends (startTmuxArgs): a wait for anything else then fails at once.
	exits bool
}

func startTmux(t *testing.T, bin string, w, h int, env ...string) *tmuxSession {
	t.Helper()
	return startTmuxArgs(t, bin, nil, w, h, env...)
}

// sessions numbers the tmux sessions of this test binary.
var sessions atomic.Int64

// startTmuxArgs runs bin with args in a detached tmux session of w x h.
func startTmuxArgs(t *testing.T, bin string, args []string, w, h int, env ...string) *tmuxSession {
	t.Helper()
	requireTool(t, "tmux")
	s := &tmuxSession{t: t, name: fmt.Sprintf("learn-test-%d-%d", os.Getpid(), sessions.Add(1)), exits: true}
	// The shell prints the exit code, then waits so the pane can be read.
	// Each session keeps its progress in a directory of its own: a test
	// never resumes where another left off, nor touches the user's.
	env = append([]string{"XDG_STATE_HOME=" + t.TempDir()}, env...)
	script := fmt.Sprintf("env %s %s %s; echo EXIT=$?; sleep 30", strings.Join(env, " "), bin, strings.Join(args, " "))
	cmd := exec.Command("tmux", "new-session", "-d", "-s", s.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), script)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	// The pane's shell leads a session of its own: learn, its supervised
	// child and its cluster are in it. The test's temporary directories
	// (learn's progress among them) go only once all of them have exited.
	out, err := exec.Command("tmux", "display-message", "-p", "-t", s.target(), "#{pane_pid}").Output()
	sid, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	t.Cleanup(func() {
		_ = exec.Command("tmux", "kill-session", "-t", s.target()).Run()
		if err != nil || perr != nil {
			t.Errorf("no pane pid to wait for (%v, %v): learn may outlive the test", err, perr)
			return
		}
		waitSessionGone(t, sid)
	})
	return s
}

// waitSessionGone waits until no process of session sid is left (zombies
// aside), woken by each one's exit: the event itself, however long it
// takes (the test binary's -timeout bounds it; t.Context is already done
// in a cleanup).
func waitSessionGone(t *testing.T, sid int) {
	t.Helper()
	for {
		members := sessionMembers(sid)
		if len(members) == 0 {
			return
		}
		waitExit(t, members)
	}
}

// sessionMembers lists the live processes whose session id is sid.
func sessionMembers(sid int) []int {
	var found []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:])) // state, ppid, pgrp, session, ...
		if len(f) > 3 && f[0] != "Z" && f[3] == strconv.Itoa(sid) {
			if pid, err := strconv.Atoi(e.Name()); err == nil {
				found = append(found, pid)
			}
		}
	}
	return found
}

func (s *tmuxSession) screen() string {
	out, err := exec.Command("tmux", "capture-pane", "-p", "-t", s.target()).CombinedOutput()
	if err != nil {
		s.t.Fatalf("capture-pane: %v: %s; the pane as last read:\n%s", err, out, s.last)
	}
	s.last = string(out)
	return s.last
}

// pane is the watch of the session's pane, started at the first wait.
func (s *tmuxSession) pane() *paneWatch {
	if s.watch == nil {
		s.watch = watchPane(s.t, func(args ...string) *exec.Cmd { return exec.Command("tmux", args...) }, s.target())
	}
	return s.watch
}

// until returns the pane once ok holds for it, reading it again at each
// of its changes. Where the pane's program has ended (its EXIT= line is
// on the pane) and ok does not hold, it fails at once.
func (s *tmuxSession) until(ok func(scr string) bool, what func() string) string {
	s.t.Helper()
	var scr string
	ended := false
	s.pane().until(s.t, func() bool {
		scr = s.screen()
		if ok(scr) {
			return true
		}
		ended = s.exits && exitLine.MatchString(scr)
		return ended
	}, func() string { return fmt.Sprintf("%s never came; the pane:\n%s", what(), s.last) })
	if ended {
		s.t.Fatalf("%s never came: the program ended; the pane:\n%s", what(), scr)
	}
	return scr
}

// waitFor waits until want is on the pane and returns the pane.
func (s *tmuxSession) waitFor(want string) string {
	s.t.Helper()
	return s.until(func(scr string) bool { return strings.Contains(scr, want) }, func() string { return fmt.Sprintf("%q", want) })
}

func (s *tmuxSession) send(keys ...string) {
	s.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", s.target()}, keys...)...).CombinedOutput(); err != nil {
		s.t.Fatalf("send-keys: %v\n%s", err, out)
	}
}

var clusterDir = regexp.MustCompile(`cluster in (/\S+)`)

// assertGone checks that no process runs a cluster in dir and dir is gone,
// once learn has ended: it waits for the processes that name dir (the
// cluster's) to exit, woken by their exits, then looks once.
func assertGone(t *testing.T, dir string) {
	t.Helper()
	for {
		procs := processesMentioning(dir)
		if len(procs) == 0 {
			break
		}
		waitExit(t, pidsOf(procs))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("left behind: the directory %s (%v)", dir, err)
	}
}

// pidsOf is the process ids of a list of processesMentioning.
func pidsOf(procs []string) []int {
	var pids []int
	for _, p := range procs {
		if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processesMentioning lists the command lines in /proc that contain s.
func processesMentioning(s string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmdline, s) {
			found = append(found, e.Name()+": "+cmdline)
		}
	}
	return found
}

// The built binary in a real terminal: home, the lesson, the play screen,
// then a way out; PostgreSQL and its directory are gone afterwards.
func TestBinaryInTmuxLeavesNothingBehind(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	exits := []struct {
		name  string
		leave func(s *tmuxSession)
		code  string
	}{
		{"q", func(s *tmuxSession) { s.send("q") }, "EXIT=0"},
		{"ctrl+c", func(s *tmuxSession) { s.send("C-c") }, "EXIT=130"}, // interrupted, as everywhere
		{"SIGTERM", func(s *tmuxSession) {
			out, _ := exec.Command("pkill", "-TERM", "-f", "^"+bin+"$").CombinedOutput()
			_ = out
		}, "EXIT=143"},
	}
	for _, ex := range exits {
		t.Run(ex.name, func(t *testing.T) {
			s := startTmux(t, bin, 200, 50)
			home := s.waitFor("PostgreSQL ready")
			m := clusterDir.FindStringSubmatch(home)
			if m == nil {
				t.Fatalf("no cluster directory on the home screen:\n%s", home)
			}
			dir := strings.TrimRight(m[1], ")…,")
			s.send("Enter")
			s.waitFor("In 1 minute")
			s.send("Escape")
			s.waitFor("Play: the lost answer")
			s.send("j", "Enter")
			s.waitFor("book 2, key")
			s.send("n")
			s.waitFor("BEGIN; lock event 1")
			ex.leave(s)
			s.waitFor(ex.code)
			assertGone(t, dir)
		})
	}
}

// waitRedrawn waits until the app has drawn at w x h after a resize: the
// pane is no longer before (a screen at another size) cut to w x h, which
// is all tmux itself does to a full-screen program's screen.
func (s *tmuxSession) waitRedrawn(before string, w, h int) {
	s.t.Helper()
	var cut []string
	for i, l := range strings.Split(strings.TrimRight(before, "\n"), "\n") {
		if i == h {
			break
		}
		cut = append(cut, strings.TrimRight(ansi.Truncate(l, w, ""), " "))
	}
	want := strings.TrimRight(strings.Join(cut, "\n"), "\n")
	s.until(func(scr string) bool {
		var now []string
		for _, l := range strings.Split(strings.TrimRight(scr, "\n"), "\n") {
			now = append(now, strings.TrimRight(l, " "))
		}
		return strings.TrimRight(strings.Join(now, "\n"), "\n") != want
	}, func() string { return fmt.Sprintf("the app's redraw at %dx%d", w, h) })
}

func (s *tmuxSession) resize(w, h int) {
	s.t.Helper()
	if out, err := exec.Command("tmux", "resize-window", "-t", s.target(), "-x", fmt.Sprint(w), "-y", fmt.Sprint(h)).CombinedOutput(); err != nil {
		s.t.Fatalf("resize-window: %v\n%s", err, out)
	}
}

// Resizing while reading or playing redraws at the new size at once, and
// quitting afterwards leaves nothing of the app on the shell's screen.
func TestBinaryInTmuxResizesAndLeavesAClearScreen(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	for _, where := range []string{"lesson", "play"} {
		t.Run(where, func(t *testing.T) {
			s := startTmux(t, bin, 80, 24)
			s.waitFor("PostgreSQL ready")
			if where == "lesson" {
				s.send("Enter")
				s.waitFor("In 1 minute")
			} else {
				s.send("j", "Enter")
				s.waitFor("book 2, key")
				s.send("+", "+", "Space")
			}
			s.resize(120, 40)
			var wide string
			if where == "play" {
				wide = s.waitFor("SQL sent") // the wide layout's own pane
			} else {
				wide = s.waitFor("Idempotency")
			}
			s.resize(100, 30)
			s.waitRedrawn(wide, 100, 30)
			s.send("q")
			scr := s.waitFor("EXIT=0")
			for _, l := range strings.Split(scr, "\n") {
				if l = strings.TrimSpace(l); l != "" && l != "EXIT=0" {
					t.Fatalf("left on the screen after quitting: %q\n%s", l, scr)
				}
			}
		})
	}
}

func (s *tmuxSession) screenWithEscapes() string {
	out, err := exec.Command("tmux", "capture-pane", "-p", "-e", "-t", s.target()).Output()
	if err != nil {
		s.t.Fatalf("capture-pane: %v", err)
	}
	return string(out)
}

// colourSGR matches an SGR sequence that sets a foreground or background
// colour (bold, italic and the like are not colour).
var colourSGR = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

func colourParams(s string) []string {
	var found []string
	for _, seq := range colourSGR.FindAllString(s, -1) {
		params := strings.Split(strings.Trim(seq, "\x1b[m"), ";")
		for _, p := range params {
			n := 0
			fmt.Sscan(strings.SplitN(p, ":", 2)[0], &n)
			if (n >= 30 && n <= 49 && n != 39 && n != 49) || (n >= 90 && n <= 107) {
				found = append(found, seq)
				break
			}
		}
	}
	return found
}

// With NO_COLOR set, no screen of the app carries a colour escape.
func TestBinaryInTmuxHonoursNO_COLOR(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	check := func(s *tmuxSession, where string) {
		t.Helper()
		if c := colourParams(s.screenWithEscapes()); len(c) > 0 {
			t.Errorf("%s: colour escapes with NO_COLOR: %q", where, c[:min(5, len(c))])
		}
	}
	s := startTmux(t, bin, 100, 30, "NO_COLOR=1")
	s.waitFor("PostgreSQL ready")
	check(s, "home")
	s.send("Enter")
	s.waitFor("In 1 minute")
	check(s, "lesson")
	s.send("Escape") // alone: ESC then j at once would read as alt+j
	s.waitFor("Race: N copies")
	s.send("j", "Enter")
	s.waitFor("book 2, key")
	s.send("+", "+", "Space")
	s.waitFor("summary of 12 steps")
	check(s, "play")
	// The same screen in colour does carry colour: the check can fail.
	c := startTmux(t, bin, 100, 30)
	c.waitFor("PostgreSQL ready")
	if len(colourParams(c.screenWithEscapes())) == 0 {
		t.Error("no colour escapes without NO_COLOR either: the check proves nothing")
	}
}

// q quits from every screen, and nothing is left behind.
func TestBinaryInTmuxQuitsFromEveryScreen(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	screens := []struct {
		name string
		keys []string
		want string
	}{
		{"home", nil, "Lesson: Idempotency"},
		{"lesson", []string{"Enter"}, "In 1 minute"},
		// The home screen's learning path: the lesson, play, checkpoint,
		// redraw, scenarios, race, …; the interview card second from the
		// end (k goes round from the first entry to the last).
		{"interview", []string{"k", "k", "Enter"}, "Say it in 30 seconds"},
		{"play", []string{"j", "Enter"}, "book 2, key"},
		{"race", []string{"j", "j", "j", "j", "j", "Enter"}, "Copies: 10"},
		{"scenarios", []string{"j", "j", "j", "j", "Enter"}, "each runs live on PostgreSQL"},
		{"help", []string{"?"}, "q quits"},
	}
	for _, sc := range screens {
		t.Run(sc.name, func(t *testing.T) {
			s := startTmux(t, bin, 80, 24)
			s.waitFor("PostgreSQL ready")
			if len(sc.keys) > 0 {
				s.send(sc.keys...)
			}
			s.waitFor(sc.want)
			s.send("q")
			s.waitFor("EXIT=0")
		})
	}
}

// learn --present opens in presenter mode: no help line, a clock, and page
// down steps.
func TestBinaryInTmuxPresenterFlag(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	s := startTmuxArgs(t, bin, []string{"--present", "play", "lost-answer"}, 80, 24)
	s.waitFor("step 1 ")
	s.send("PageDown")
	scr := s.waitFor("step 2 ")
	if strings.Contains(scr, "space play/pause") {
		t.Errorf("presenter mode shows the help line:\n%s", scr)
	}
	if !regexp.MustCompile(`step 2 +\d\d:\d\d`).MatchString(scr) {
		t.Errorf("no MM:SS clock:\n%s", scr)
	}
	s.send("q")
	s.waitFor("EXIT=0")
}

// A panic in a goroutine of learn's (injected) ends the program, yet the
// terminal is back in cooked mode on the normal screen, the panic is shown,
// and the cluster is gone.
func TestBinaryInTmuxCrashRestoresTheTerminal(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	requireTool(t, "tmux")
	name := fmt.Sprintf("learn-crash-%d", time.Now().UnixNano())
	script := fmt.Sprintf("env XDG_STATE_HOME=%s LEARN_CRASH_AFTER=2500ms %s; echo EXIT=$?; stty -a | grep -o -- '-\\?icanon' | sed 's/^/MODE=/'; sleep 30", t.TempDir(), bin)
	if out, err := exec.Command("tmux", "new-session", "-d", "-s", name, "-x", "200", "-y", "50", script).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	s := &tmuxSession{t: t, name: name}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", exactTarget(name)).Run() })
	home := s.waitFor("PostgreSQL ready")
	m := clusterDir.FindStringSubmatch(home)
	if m == nil {
		t.Fatalf("no cluster directory on the home screen:\n%s", home)
	}
	dir := strings.TrimRight(m[1], ")…,")
	scr := s.waitFor("MODE=")
	for _, want := range []string{"panic: injected crash", "learn crashed", "EXIT=2", "MODE=icanon"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the pane lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "Lesson: Idempotency") {
		t.Errorf("the app's screen is still shown:\n%s", scr)
	}
	assertGone(t, dir)
}

// Scores and the drill schedule survive a restart, and a damaged progress
// file is moved aside with a notice while learn goes on.
func TestBinaryInTmuxProgressSurvivesRestartAndDamage(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	state := t.TempDir()
	env := "XDG_STATE_HOME=" + state

	s := startTmux(t, bin, 80, 24, env)
	s.waitFor("Redraw it (1 question)")
	for range 3 { // past the lesson, play and the checkpoint
		s.send("j")
	}
	s.send("Enter")
	s.waitFor("6. ")
	for range 6 { // every blank filled with a choice, in the shuffled order
		s.send("h", "h", "Space", "l", "Space", "l", "Space", "j")
	}
	s.send("Enter")
	s.waitFor("The right order:")
	s.send("Enter")
	s.waitFor("Redraw it: done")
	s.send("q")
	s.waitFor("EXIT=0")

	again := startTmux(t, bin, 80, 24, env)
	again.waitFor("· 1 attempt")
	again.send("q")
	again.waitFor("EXIT=0")

	file := filepath.Join(state, "learn", "progress.json")
	if err := os.WriteFile(file, []byte(`{"version": 2, "sets": {"redraw": `), 0o600); err != nil {
		t.Fatal(err)
	}
	damaged := startTmux(t, bin, 80, 24, env)
	damaged.waitFor("! ")
	for range 3 { // down to the redraw, past the lesson, play and the checkpoint
		damaged.send("j")
	}
	scr := damaged.waitFor("▸ Redraw it (1 question)")
	if line := scr[strings.Index(scr, "▸ Redraw it"):]; !strings.Contains(line[:strings.Index(line, "\n")], "not taken yet") {
		t.Errorf("learn did not go on with fresh progress:\n%s", scr)
	}
	aside, _ := filepath.Glob(file + ".damaged-*")
	if len(aside) != 1 {
		t.Errorf("damaged file not moved aside: %v", aside)
	}
	damaged.send("q")
	damaged.waitFor("EXIT=0")
}

// SIGQUIT sent to the process doing the work (Go's goroutine dump) is a
// crash too: the parent restores the terminal and removes the cluster.
func TestBinaryInTmuxSIGQUITRestoresTheTerminal(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	s := startTmux(t, bin, 200, 50)
	home := s.waitFor("PostgreSQL ready")
	m := clusterDir.FindStringSubmatch(home)
	if m == nil {
		t.Fatalf("no cluster directory on the home screen:\n%s", home)
	}
	dir := strings.TrimRight(m[1], ")…,")
	// The child is the learn process whose parent is the supervising learn.
	out, err := exec.Command("pgrep", "-f", "^"+bin+"$").Output()
	if err != nil {
		t.Fatalf("pgrep: %v", err)
	}
	var child string
	for _, pid := range strings.Fields(string(out)) {
		if ppid, err := os.ReadFile(filepath.Join("/proc", pid, "stat")); err == nil {
			fields := strings.Fields(string(ppid))
			if len(fields) > 3 && slices.Contains(strings.Fields(string(out)), fields[3]) {
				child = pid
			}
		}
	}
	if child == "" {
		t.Fatalf("no child among %q", out)
	}
	if err := exec.Command("kill", "-QUIT", child).Run(); err != nil {
		t.Fatal(err)
	}
	scr := s.waitFor("EXIT=")
	for _, want := range []string{"learn crashed", "EXIT=2"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the pane lacks %q:\n%s", want, scr)
		}
	}
	assertGone(t, dir)
}

// A reader that stops early (learn demo | head -1) ends learn with SIGPIPE:
// that is no crash, and nothing says it is.
func TestBinaryBrokenPipeIsNoCrash(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	cmd := exec.Command("sh", "-c", bin+" demo concurrent-copies --copies 50 | head -1")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(string(out), "crashed") || strings.Contains(string(out), "panic") {
		t.Errorf("a closed pipe was reported as a crash:\n%s", out)
	}
}

// exactTarget names tmux session name and nothing else: a bare name also
// matches any session it is a prefix of, so once learn-test-1 has gone,
// "-t learn-test-1" would read, type into or kill learn-test-10.
func exactTarget(name string) string { return "=" + name + ":" }

func (s *tmuxSession) target() string { return exactTarget(s.name) }

// A session's target never reaches another session whose name it begins:
// with a bare name, capture-pane of a finished learn-test-1 read
// learn-test-10's pane, and its cleanup killed it.
func TestExactTargetNeverMatchesALongerName(t *testing.T) {
	requireTool(t, "tmux")
	name := fmt.Sprintf("learn-prefix-%d-1", os.Getpid())
	if out, err := exec.Command("tmux", "new-session", "-d", "-s", name+"0", "sleep 30").CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", exactTarget(name+"0")).Run() })
	if err := exec.Command("tmux", "capture-pane", "-p", "-t", exactTarget(name)).Run(); err == nil {
		t.Errorf("capture-pane -t %s read session %s0", exactTarget(name), name)
	}
	if err := exec.Command("tmux", "has-session", "-t", exactTarget(name+"0")).Run(); err != nil {
		t.Errorf("the session's own target does not find it: %v", err)
	}
}
