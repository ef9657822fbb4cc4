package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/learn-idempotency/learn/internal/room"
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

// Without a terminal learn workshop logs instead of showing the
// dashboard: it says how to join, lets an attendee in, ends on the signal
// (exit 0) and leaves the room's summary where it says.
func TestWorkshopWithoutATerminal(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errb strings.Builder
	go func() {
		code := run(ctx, []string{"workshop", "--addr", "127.0.0.1:0", "--code", "kq7m-3hxt", "--database-url", testDB.ConnString(),
			"--host-key", filepath.Join(dir, "key"), "--summary-dir", filepath.Join(dir, "summaries")}, strings.NewReader(""), pw, &errb)
		pw.Close()
		done <- code
	}()
	lines := bufio.NewScanner(pr)
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
	data, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	var sum room.Summary
	if err := json.Unmarshal(data, &sum); err != nil || sum.Ended.IsZero() {
		t.Errorf("the summary %s: %v\n%s", m[1], err, data)
	}
	for _, want := range []string{"join code: kq7m-3hxt", "host key SHA256:", "ready; Ctrl-C ends the workshop"} {
		if !strings.Contains(strings.Join(out, "\n")+log, want) {
			t.Errorf("the output lacks %q", want)
		}
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
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"workshop", "--addr", "0.0.0.0:0", "--database-url", testDB.ConnString(),
			"--host-key", filepath.Join(dir, "key"), "--summary-dir", dir}, strings.NewReader(""), pw, io.Discard)
		pw.Close()
		done <- code
	}()
	lines := bufio.NewScanner(pr)
	var out []string
	for lines.Scan() {
		out = append(out, lines.Text())
		if strings.Contains(lines.Text(), "ready;") {
			break
		}
	}
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
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
