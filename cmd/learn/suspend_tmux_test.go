package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/learn-idempotency/learn/internal/uitest"
)

// flag is a tmux format flag of the pane, "0" or "1".
func (p *privateTmux) flag(name string) string {
	p.t.Helper()
	out, err := p.cmd("display", "-p", "-t", "main", "#{"+name+"}").Output()
	if err != nil {
		p.t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// waitFlag waits until the pane's format flag name is want: the modes the
// flags tell of change by what the program writes to the pane.
func (p *privateTmux) waitFlag(name, want string) {
	p.t.Helper()
	p.until(func() bool { return p.flag(name) == want }, func() string { return name + " at " + want })
}

// The app suspends as a job, by Ctrl+Z in it or by SIGTSTP to its job from
// outside (what a shell's kill -TSTP %1 does): the shell gets its terminal
// back as it was (the main screen, the prompt, the line mode it had), with
// a line that says PostgreSQL keeps running, and PostgreSQL does; fg brings
// the app back in raw mode, redrawn, where a single q (no Enter) quits;
// kill %1 ends it while it is stopped, with its PostgreSQL.
// Before, Ctrl+Z did nothing, and a SIGTSTP left the alternate screen on
// and the terminal in line mode after fg.
func TestBinaryInTmuxSuspendsAndResumesAsAJob(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	for _, how := range []string{"ctrl+z", "kill -TSTP", "ctrl+z, then kill %1", "kill -TSTP while it starts"} {
		t.Run(how, func(t *testing.T) {
			tmp := t.TempDir()
			p := newPrivateTmux(t)
			p.run("new-session", "-d", "-s", "main", "-x", "120", "-y", "30",
				"-e", "XDG_STATE_HOME="+t.TempDir(), "-e", "TMPDIR="+tmp,
				"bash --norc --noprofile -i")
			p.run("send-keys", "-t", "main", "PS1='$ '", "Enter")
			starting := how == "kill -TSTP while it starts"
			if starting {
				// The supervisor's first frame is up; the app's process
				// waits (LEARN_SLOW_START) before it takes the terminal.
				ready := slowStartReady(t)
				p.run("send-keys", "-t", "main", "LEARN_SLOW_START=3s LEARN_SLOW_START_READY="+ready.Name()+" "+bin+" play lost-answer", "Enter")
				p.waitFlag("alternate_on", "1")
				readLine(t, ready) // the app's process has begun to wait
				checkCatching(t, bin, syscall.SIGTSTP)
			} else {
				p.run("send-keys", "-t", "main", bin+" play lost-answer", "Enter")
				p.waitFor(regexp.MustCompile(`step 1 ·`)) // PostgreSQL is up
			}
			if strings.HasPrefix(how, "kill -TSTP") {
				stopJob(t, bin)
			} else {
				p.run("send-keys", "-t", "main", "C-z")
			}
			scr := p.waitFor(regexp.MustCompile(`Stopped`))
			if !starting && !strings.Contains(scr, "learn is suspended; its PostgreSQL keeps running") {
				t.Errorf("the suspension is not said; the pane:\n%s", scr)
			}
			if v := p.flag("alternate_on"); v != "0" {
				t.Errorf("the alternate screen is still on while learn is stopped; the pane:\n%s", scr)
			}
			if pg := descendantsRunning(t, bin, "postgres"); len(pg) == 0 && !starting {
				t.Errorf("no PostgreSQL of learn's runs while learn is stopped")
			}
			// The shell has its line mode: what is typed echoes, Enter runs it.
			p.run("send-keys", "-t", "main", "echo SHELL-OK", "Enter")
			p.waitFor(regexp.MustCompile(`(?m)^SHELL-OK`))

			if how == "ctrl+z, then kill %1" {
				// A stopped learn ends on SIGTERM (then SIGCONT), with its
				// PostgreSQL, and leaves the terminal as the shell has it.
				p.run("send-keys", "-t", "main", "set -b; kill %1", "Enter")
				scr := p.waitFor(jobEnd)
				if m := jobEnd.FindStringSubmatch(scr); m[1] != "Exit 143" || !strings.Contains(scr, "learn: terminated") {
					t.Errorf("want the job's end as Exit 143 and \"learn: terminated\", got %q; the pane:\n%s", m[1], scr)
				}
				if v := p.flag("alternate_on"); v != "0" {
					t.Errorf("the alternate screen is on after the stopped learn ended; the pane:\n%s", scr)
				}
				waitGone(t, bin, tmp)
				return
			}
			p.run("send-keys", "-t", "main", "fg", "Enter")
			p.waitFlag("alternate_on", "1")
			p.waitFor(regexp.MustCompile(`step \d+ ·`)) // redrawn
			p.run("send-keys", "-t", "main", "q")       // no Enter: raw mode
			p.waitFlag("alternate_on", "0")
			p.run("send-keys", "-t", "main", "echo EXIT=$?", "Enter")
			scr = p.waitFor(exitLine)
			if !strings.Contains(scr, "EXIT=0") {
				t.Errorf("learn did not quit cleanly after fg; the pane:\n%s", scr)
			}
			waitGone(t, bin, tmp)
		})
	}
}

// descendantsRunning lists the processes under the running bin whose
// program's name is name.
func descendantsRunning(t *testing.T, bin, name string) []string {
	t.Helper()
	parent := map[int]int{}
	comm := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		open, end := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		parent[pid], comm[pid] = ppid, string(stat[open+1:end])
	}
	roots := map[int]bool{}
	for _, p := range processesRunning(bin) {
		if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
			roots[pid] = true
		}
	}
	var found []string
	for pid, c := range comm {
		if c != name {
			continue
		}
		for up := parent[pid]; up > 1; up = parent[up] {
			if roots[up] {
				found = append(found, strconv.Itoa(pid))
				break
			}
		}
	}
	return found
}

// slowStartReady is a FIFO of the test's own for LEARN_SLOW_START_READY,
// open to read: the app's process writes a line to it as its slow start
// begins, once both of learn's processes catch SIGTSTP.
func slowStartReady(t *testing.T) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ready")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read and write: the open waits for no writer, and the app's open to
	// write finds a reader.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// readLine waits for a line on f; it fails shortly before the test
// binary's -timeout.
func readLine(t *testing.T, f *os.File) {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		_, err := bufio.NewReader(f).ReadString('\n')
		got <- err
	}()
	guard, stop := uitest.Guard(t)
	defer stop()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("reading %s: %v", f.Name(), err)
		}
	case <-guard:
		t.Fatalf("no line on %s", f.Name())
	}
}

// checkCatching checks that both of learn's processes running bin (the
// supervisor and the app's process) catch sig.
func checkCatching(t *testing.T, bin string, sig syscall.Signal) {
	t.Helper()
	procs := processesRunning(bin)
	if len(procs) != 2 {
		t.Fatalf("want learn's two processes, got %v", procs)
	}
	for _, p := range procs {
		status, err := os.ReadFile(filepath.Join("/proc", strings.SplitN(p, ":", 2)[0], "status"))
		if err != nil {
			t.Fatal(err)
		}
		caught := false
		for _, l := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(l, "SigCgt:"); ok {
				mask, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				caught = mask&(1<<(uint(sig)-1)) != 0
			}
		}
		if !caught {
			t.Fatalf("%s does not catch %v", p, sig)
		}
	}
}

// stopJob sends SIGTSTP to the process group of the running bin, as a
// shell's kill -TSTP %1 does.
func stopJob(t *testing.T, bin string) {
	t.Helper()
	procs := processesRunning(bin)
	if len(procs) == 0 {
		t.Fatal("learn is not running")
	}
	pid, err := strconv.Atoi(strings.SplitN(procs[0], ":", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pgid, syscall.SIGTSTP); err != nil {
		t.Fatal(err)
	}
}

// A workshop is never suspended: a SIGTSTP to its job leaves the server
// and the dashboard running (every attendee's session runs in its
// process), and the dashboard still takes keys and attendees. Before, the
// job stopped, and every attendee with it.
func TestBinaryInTmuxWorkshopIsNeverSuspended(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	ssh := requireTool(t, "ssh")
	bin := buildLearn(t)
	dir := t.TempDir()
	const code = "kq7m-3hxt"
	presenter := startTmuxArgs(t, bin, []string{"workshop", "--addr", "127.0.0.1:0", "--code", code,
		"--database-url", "'" + testDB.ConnString() + "'", "--host-key", dir + "/key", "--summary-dir", dir}, 120, 40)
	scr := presenter.waitFor("Nobody yet")
	m := dashboardPort.FindStringSubmatch(scr)
	if m == nil {
		t.Fatalf("no port on the dashboard:\n%s", scr)
	}
	stopJob(t, bin)
	presenter.send("?")
	presenter.waitFor("Keys") // the dashboard still takes keys
	presenter.send("Escape")
	attendSSH(t, ssh, m[1], "ada", code, 80, 24)
	presenter.waitFor("1 of 50 connected")
	presenter.send("C-c")
	presenter.waitFor("EXIT=0")
}
