package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/learn-idempotency/learn/internal/exit"
	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/supervisor"
	"github.com/learn-idempotency/learn/internal/uitest"
)

// learn workshop refuses what it cannot take, in one line that says what
// to pass.
func TestWorkshopBadCommandLines(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"workshop", "--addr", "2222"}, `--addr "2222" is not host:port`},
		{[]string{"workshop", "--code", "abc"}, "--code must be at least 6 characters"},
		{[]string{"workshop", "--idle", "0s"}, "--idle must be at least 1s, got 0s"},
		{[]string{"workshop", "--idle", "abc"}, `--idle must be a duration such as 30m or 1h30m, got "abc"`},
		{[]string{"workshop", "--connections", "abc"}, `--connections must be a whole number from 0 to 262143, got "abc"`},
		{[]string{"workshop", "--connections", "-1"}, "--connections must be from 0 to 262143, got -1"},
		{[]string{"workshop", "--addr", "0.0.0.0:70000"}, `--addr "0.0.0.0:70000" is not host:port with a port from 0 to 65535`},
		{[]string{"workshop", "--max-attendees", "0"}, "--max-attendees must be from 1 to 1000, got 0"},
		{[]string{"workshop", "--max-attendees", "5000"}, "--max-attendees must be from 1 to 1000, got 5000"},
		{[]string{"workshop", "now"}, "workshop takes no names, got now"},
	} {
		code, out, errs := runCLI(t, tt.args...)
		if code != exitUsage || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("learn %v: code %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errs, tt.want)
		}
	}
}

var joinLine = regexp.MustCompile(`ssh -p (\d+) 127\.0\.0\.1`)

// workshopInProcess runs learn workshop in this process with args (after
// "workshop"), its standard input empty, until ctx ends. It returns the
// lines of its standard output, its exit code once it has ended, and its
// standard error, to read once the code is in.
func workshopInProcess(ctx context.Context, args ...string) (lines *bufio.Scanner, done <-chan int, stderr *strings.Builder) {
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	stderr = &strings.Builder{}
	go func() {
		c := run(ctx, append([]string{"workshop"}, args...), strings.NewReader(""), pw, stderr)
		pw.Close()
		code <- c
	}()
	return bufio.NewScanner(pr), code, stderr
}

// Without a terminal learn workshop logs instead of showing the
// dashboard: it says how to join, lets an attendee in, ends on the signal
// (exit 0) and leaves the room's summary where it says.
func TestWorkshopWithoutATerminal(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lines, done, errb := workshopInProcess(ctx, "--addr", "127.0.0.1:0", "--code", "kq7m-3hxt", "--database-url", testDB.ConnString(),
		"--host-key", filepath.Join(dir, "key"), "--summary-dir", filepath.Join(dir, "summaries"), "--max-attendees", "1")
	var out []string
	port := ""
	for port == "" && lines.Scan() {
		out = append(out, lines.Text())
		if m := joinLine.FindStringSubmatch(lines.Text()); m != nil {
			port = m[1]
		}
	}
	if port == "" {
		t.Fatalf("no ssh line; the output:\n%s\nstderr: %s", strings.Join(out, "\n"), errb.String())
	}
	rest := make(chan string)
	go func() {
		var more []string
		for lines.Scan() {
			more = append(more, lines.Text())
		}
		rest <- strings.Join(more, "\n")
	}()

	client, err := gossh.Dial("tcp", "127.0.0.1:"+port, &gossh.ClientConfig{User: "ada", Auth: []gossh.AuthMethod{gossh.Password("kq7m-3hxt")},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("ssh: %v", err)
	}
	s, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	s.Stderr = &stderr
	if err := s.Run("progress"); err == nil || !strings.Contains(stderr.String(), `no progress kept for "ada" yet`) {
		t.Errorf("progress before any answer: %v, %q", err, stderr.String())
	}
	client.Close()

	cancel() // as Ctrl-C does
	if code := <-done; code != exitOK {
		t.Errorf("exit code %d after the signal, want 0; stderr %s", code, errb.String())
	}
	log := <-rest
	m := regexp.MustCompile(`the room's summary \(0 attendees\): (\S+)`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no summary line; after the ssh line:\n%s", log)
	}
	readSummary(t, m[1])
	// learn workshop | tee ws.log: tee dies with the same Ctrl-C, so the
	// path (and the end) are said on standard error as well.
	if want := "learn workshop: the room's summary (0 attendees): " + m[1] + "\nlearn workshop: ended\n"; !strings.HasSuffix(errb.String(), want) {
		t.Errorf("standard error %q, want it to end with %q", errb.String(), want)
	}
	for _, want := range []string{"join code: kq7m-3hxt", "host key SHA256:", "ready; Ctrl-C ends the workshop", "at most 1 attendee at once;"} {
		if !strings.Contains(strings.Join(out, "\n")+log, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	// The SSH library's own lines (wish's logging middleware) are not the
	// presenter's: "ada connect 127.0.0.1:50724 false [] …".
	if raw := regexp.MustCompile(` connect [0-9.:\[\]]+ | disconnect |SSH-2\.0-`); raw.MatchString(log) {
		t.Errorf("the log has the SSH library's lines:\n%s", log)
	}
	if strings.Contains(strings.Join(out, "\n"), "WARNING") {
		t.Error("a loopback address was warned about")
	}
}

// Listening on every interface, learn workshop warns what the join code
// guards, and gives the room this machine's addresses.
func TestWorkshopOnEveryInterfaceWarns(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lines, done, _ := workshopInProcess(ctx, "--addr", "0.0.0.0:0", "--database-url", testDB.ConnString(),
		"--host-key", filepath.Join(dir, "key"), "--summary-dir", dir)
	var out []string
	for lines.Scan() {
		out = append(out, lines.Text())
		if strings.Contains(lines.Text(), "ready;") {
			break
		}
	}
	cancel()
	go func() { // the rest of the output, so that the workshop never waits to write it
		for lines.Scan() {
		}
	}()
	<-done
	text := strings.Join(out, "\n")
	if !strings.Contains(text, "WARNING: 0.0.0.0:0 is reachable from other machines: the join code is all that lets someone in") {
		t.Errorf("no warning:\n%s", text)
	}
	if !regexp.MustCompile(`join code: [a-z2-9]{4}-[a-z2-9]{4} \(typed at the password prompt\)`).MatchString(text) {
		t.Errorf("no generated code:\n%s", text)
	}
	if strings.Contains(text, "ssh -p 0 ") || strings.Contains(text, " 0.0.0.0\n") {
		t.Errorf("the room is told to dial an address it cannot:\n%s", text)
	}
}

// startWorkshopBin runs the built learn workshop with args, unsupervised
// (kill -9 then leaves no parent to clean up), and returns it once it is
// ready, with what it printed.
func startWorkshopBin(t *testing.T, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	return startWorkshopBinIn(t, bin, dir, append([]string{"--summary-dir", dir}, args...)...)
}

// startWorkshopBinIn is startWorkshopBin with learn's state (and so its
// default summary directory) and the host key in dir.
func startWorkshopBinIn(t *testing.T, bin, dir string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"workshop", "--addr", "127.0.0.1:0", "--code", "kq7m-3hxt",
		"--host-key", filepath.Join(dir, "key")}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir, supervisor.EnvChild+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "ready;") {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return cmd, out.String()
		}
	}
	t.Fatalf("learn workshop ended before it was ready:\n%s", out.String())
	return nil, ""
}

// attendPlay is an attendee on the lost answer's play screen, its run
// holding a schema, until the test ends.
func attendPlay(t *testing.T, port string) {
	t.Helper()
	client, err := gossh.Dial("tcp", "127.0.0.1:"+port, &gossh.ClientConfig{User: "ada", Auth: []gossh.AuthMethod{gossh.Password("kq7m-3hxt")},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	emu := uitest.NewScreen(100, 30)
	stdin, _ := sess.StdinPipe()
	stdout, _ := sess.StdoutPipe()
	go func() { _, _ = io.Copy(stdin, emu.Answers()) }()
	go func() { _, _ = io.Copy(emu, stdout) }()
	if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("play lost-answer"); err != nil {
		t.Fatal(err)
	}
	emu.WaitFor(t, "book 2, key")
}

// A workshop killed outright (kill -9, no parent left) leaves its
// attendees' schemas in the user's database, or its own cluster; the next
// workshop removes them as it starts.
func TestKilledWorkshopIsReapedByTheNext(t *testing.T) {
	bin := buildLearn(t)
	t.Run("url", func(t *testing.T) {
		before := otherSchemas(t)
		cmd, out := startWorkshopBin(t, bin, "--database-url", testDB.ConnString())
		attendPlay(t, joinLine.FindStringSubmatch(out)[1])
		left := slices.DeleteFunc(otherSchemas(t), func(s string) bool { return slices.Contains(before, s) })
		if len(left) != 1 {
			t.Fatalf("the attendee's run holds schemas %v, want one", left)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if !slices.Contains(otherSchemas(t), left[0]) {
			t.Fatalf("%s is gone already: nothing to test", left[0])
		}
		startWorkshopBin(t, bin, "--database-url", testDB.ConnString())
		if slices.Contains(otherSchemas(t), left[0]) {
			t.Errorf("the killed workshop's schema %s is still there once the next has started", left[0])
		}
	})
	t.Run("local", func(t *testing.T) {
		cmd, out := startWorkshopBin(t, bin, "--postgres", "local")
		m := clusterDir.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no cluster directory in:\n%s", out)
		}
		dir := strings.TrimRight(m[1], ")…,")
		attendPlay(t, joinLine.FindStringSubmatch(out)[1])
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("the killed workshop's cluster %s is gone already (%v): nothing to test", dir, err)
		}
		startWorkshopBin(t, bin, "--postgres", "local")
		assertGone(t, dir)
	})
}

// The supervisor's first frame runs the command line to see what the app
// would show: for the workshop it shows nothing, and starts nothing.
func TestWorkshopHasNoFirstFrameAndStartsNothingForIt(t *testing.T) {
	done := make(chan bool, 1)
	go func() {
		done <- inspect([]string{"workshop", "--addr", "127.0.0.1:0", "--database-url", testDB.ConnString()}).first != nil
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("inspect found a first frame for learn workshop")
		}
	case <-t.Context().Done():
		t.Fatal("inspect of learn workshop never returned: it ran the workshop")
	}
}

// A host key that cannot be kept is said before anything starts: no port
// taken, no PostgreSQL looked for.
func TestWorkshopBadHostKeyStartsNothing(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // never the person's summaries: another workshop may be running
	code, out, errs := runCLI(t, "workshop", "--addr", "127.0.0.1:0", "--host-key", "/proc/no-such-dir/key")
	if code != exitFailure || out != "" || !strings.Contains(errs, "pass --host-key with a file in a directory you can write") {
		t.Fatalf("code %d, stdout %q, stderr %q; want 1 and what to pass", code, out, errs)
	}
	if strings.Contains(errs, "PostgreSQL") {
		t.Errorf("PostgreSQL was looked for before the host key was checked:\n%s", errs)
	}
}

// A host key that is a file but not a key (here /etc/passwd) is said
// before anything starts, the file left as it is, and the error never
// advises removing it: learn did not make it.
func TestWorkshopHostKeyThatIsNotAKeyIsLeftAndNeverAdvisedRemoved(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // never the person's summaries: another workshop may be running
	before, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Skip("no /etc/passwd here")
	}
	code, out, errs := runCLI(t, "workshop", "--addr", "127.0.0.1:0", "--host-key", "/etc/passwd", "--database-url", testDB.ConnString())
	if code != exitFailure || out != "" || !strings.Contains(errs, "the host key /etc/passwd cannot be used") || !strings.Contains(errs, "pass --host-key with") {
		t.Fatalf("code %d, stdout %q, stderr %q; want 1 and what to pass", code, out, errs)
	}
	if strings.Contains(strings.ToLower(errs), "remove") || strings.Contains(errs, "PostgreSQL") {
		t.Errorf("the error advises removing the file, or PostgreSQL was looked for first: %s", errs)
	}
	if after, _ := os.ReadFile("/etc/passwd"); !bytes.Equal(after, before) {
		t.Error("/etc/passwd was changed")
	}
}

// A summary directory that cannot be written is said before anything
// starts, as a bad host key is: no port taken, no PostgreSQL looked for.
func TestWorkshopBadSummaryDirStartsNothing(t *testing.T) {
	// Already cancelled: a workshop that started would stop at once
	// (exit 0) rather than run on.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var outb, errb strings.Builder
	code := run(ctx, []string{"workshop", "--addr", "127.0.0.1:0", "--host-key", filepath.Join(t.TempDir(), "key"), "--summary-dir", "/proc/nope"},
		strings.NewReader(""), &outb, &errb)
	out, errs := outb.String(), errb.String()
	if code != exitFailure || out != "" || !strings.Contains(errs, "cannot write the room's summary into /proc/nope") ||
		!strings.Contains(errs, "pass --summary-dir with a directory you can write") {
		t.Fatalf("code %d, stdout %q, stderr %q; want 1 and what to pass", code, out, errs)
	}
	if strings.Contains(errs, "PostgreSQL") {
		t.Errorf("PostgreSQL was looked for before the summary directory was checked:\n%s", errs)
	}
}

// A summary directory that fails by the end (here replaced by a file)
// loses nothing: the summary goes to learn's default directory, and the
// presenter is told where, with exit status 1.
func TestWorkshopSummaryDirThatFailsAtTheEndLosesNothing(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	t.Setenv("XDG_STATE_HOME", state)
	summaries := filepath.Join(dir, "summaries")
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	lines, done, errb := workshopInProcess(ctx, "--addr", "127.0.0.1:0", "--code", "kq7m-3hxt", "--database-url", testDB.ConnString(),
		"--host-key", filepath.Join(dir, "key"), "--summary-dir", summaries)
	for lines.Scan() && !strings.Contains(lines.Text(), "ready; Ctrl-C ends the workshop") {
	}
	go func() { // the rest of the output, so that the workshop never waits to write it
		for lines.Scan() {
		}
	}()
	if err := os.RemoveAll(summaries); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(summaries, nil, 0o600); err != nil { // no directory can be made there now
		t.Fatal(err)
	}
	cancel(exit.Signalled(syscall.SIGINT)) // Ctrl-C, the workshop's normal end
	if code := <-done; code != exitFailure {
		t.Errorf("exit code %d, want 1 (not 130: the signal is the normal end): the summary is not where it was asked for\n%s", code, errb)
	}
	errs := errb.String()
	m := regexp.MustCompile(`the room's summary \(0 attendees\), written there instead: (\S+)`).FindStringSubmatch(errs)
	if m == nil || !strings.HasPrefix(m[1], filepath.Join(state, "learn", "workshops")+string(filepath.Separator)) {
		t.Fatalf("no summary in the default directory %s on standard error:\n%s", state, errs)
	}
	readSummary(t, m[1])
	if !strings.Contains(errs, "cannot write the room's summary into "+summaries) {
		t.Errorf("standard error does not say which directory failed:\n%s", errs)
	}
}

// readSummary reads the room's summary the workshop wrote at path and
// checks that it is one, ended.
func readSummary(t *testing.T, path string) room.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum room.Summary
	if err := json.Unmarshal(data, &sum); err != nil || sum.Ended.IsZero() {
		t.Errorf("the summary %s: %v\n%s", path, err, data)
	}
	return sum
}

var keptIn = regexp.MustCompile(`the room's summary is kept in (\S+) as it changes`)

// A workshop killed outright (kill -9: as a crash or a power cut, it has
// no chance to write anything) leaves the room's summary as it was a
// second before, in the directory asked for; learn doctor then says where
// it is, once; and the next learn workshop says where the one after was
// left. Before, the summary was written only at the end, so a workshop
// that died lost every attendee's scores and progress.
func TestKilledWorkshopLeavesTheRoomsSummaryAndTheNextSaysWhere(t *testing.T) {
	bin := buildLearn(t)
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)              // learn doctor, run here, looks where the workshops keep their markers
	summaries := filepath.Join(dir, "summaries") // not the default directory: the marker there finds it
	url := testDB.ConnString()

	first, out := startWorkshopBinIn(t, bin, dir, "--summary-dir", summaries, "--database-url", url)
	m := keptIn.FindStringSubmatch(out)
	if m == nil || filepath.Dir(m[1]) != summaries {
		t.Fatalf("the workshop does not say where it keeps the room's summary:\n%s", out)
	}
	kept := m[1]
	keeping := watchDir(t, summaries)
	attendPlay(t, joinLine.FindStringSubmatch(out)[1]) // ada, on a play screen
	keeping.until(t, func() bool {
		s, err := os.ReadFile(kept)
		return err == nil && strings.Contains(string(s), `"name": "ada"`) && strings.Contains(string(s), `"last_screen": "Play`)
	}, func() string { return "ada never reached the kept summary " + kept })
	_ = first.Process.Kill()
	_ = first.Wait()
	sum := readSummaryFile(t, kept)
	if !sum.Ended.IsZero() || len(sum.Attendees) != 1 || sum.Attendees[0].Name != "ada" {
		t.Errorf("the summary a killed workshop left: %+v", sum)
	}

	_, report, _ := doctorReport(t, "--database-url", url)
	_, leftovers, _ := strings.Cut(report, "Leftovers")
	leftovers, _, _ = strings.Cut(leftovers, "\n1. ")
	if !strings.Contains(leftovers, "did not end (killed, crashed or a power cut); its room's summary, as kept at ") ||
		!strings.Contains(leftovers, "(1 attendee), is in "+kept) {
		t.Errorf("learn doctor does not say where the killed workshop's summary is:\n%s", leftovers)
	}

	second, out := startWorkshopBinIn(t, bin, dir, "--summary-dir", summaries, "--database-url", url)
	if strings.Contains(out, "did not end") {
		t.Errorf("the next workshop says again what learn doctor said:\n%s", out)
	}
	secondKept := keptIn.FindStringSubmatch(out)[1]
	_ = second.Process.Kill()
	_ = second.Wait()
	_, out = startWorkshopBinIn(t, bin, dir, "--summary-dir", summaries, "--database-url", url)
	if !strings.Contains(out, "did not end (killed, crashed or a power cut); its room's summary, as kept at ") ||
		!strings.Contains(out, "(0 attendees), is in "+secondKept) {
		t.Errorf("the workshop after a killed one does not say where its summary is:\n%s", out)
	}
}

// readSummaryFile reads a room's summary, whole.
func readSummaryFile(t *testing.T, path string) room.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum room.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatalf("the summary %s is not whole: %v\n%s", path, err, data)
	}
	return sum
}
