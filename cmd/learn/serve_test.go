package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// serveProc is the built binary running learn serve.
type serveProc struct {
	t         *testing.T
	cmd       *exec.Cmd
	stdout    string // everything up to the ready line
	stderr    *uitest.Buffer
	front     string   // http://127.0.0.1:PORT
	instances []string // each API instance's own URL, api-1 first
	dir       string   // the cluster directory; "" on an existing server
	done      chan struct{}
	waitErr   error
}

var (
	serveListening = regexp.MustCompile(`(?m)^learn serve: listening on (http://\S+)`)
	serveInstance  = regexp.MustCompile(`(?m)^learn serve: api-\d+ on (http://\S+)`)
)

// serveDBArgs points learn serve at the test server when LEARN_TEST_DATABASE
// names one, and at a local throwaway cluster otherwise.
func serveDBArgs() []string {
	if u := os.Getenv("LEARN_TEST_DATABASE"); u != "" {
		return []string{"--database-url", u}
	}
	return []string{"--postgres", "local"}
}

// startServe runs learn serve with args and waits for its ready line.
func startServe(t *testing.T, bin string, args ...string) *serveProc {
	t.Helper()
	p := &serveProc{t: t, stderr: &uitest.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, append(append([]string{"serve"}, args...), serveDBArgs()...)...)
	p.cmd.Env = append(os.Environ(), "DATABASE_URL=")
	p.cmd.Stderr = p.stderr
	out := &uitest.Buffer{}
	p.cmd.Stdout = out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		// A test that failed half way still stops the server and its
		// PostgreSQL the way a person would.
		select {
		case <-p.done:
			return
		default:
		}
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})

	// Its standard output is read again at each write to it.
	guard, stop := uitest.Guard(t)
	defer stop()
	for {
		written := out.Changed()
		if strings.Contains(out.String(), "\nlearn serve: ready") {
			break
		}
		select {
		case <-p.done:
			t.Fatalf("learn serve %v exited before it was ready (%v)\nstdout:\n%s\nstderr:\n%s", args, p.waitErr, out, p.stderr)
		case <-written:
		case <-guard:
			t.Fatalf("learn serve %v never was ready\nstdout:\n%s\nstderr:\n%s", args, out, p.stderr)
		}
	}
	p.stdout = out.String()
	m := serveListening.FindStringSubmatch(p.stdout)
	if m == nil {
		t.Fatalf("no listening line:\n%s", p.stdout)
	}
	p.front = m[1]
	for _, m := range serveInstance.FindAllStringSubmatch(p.stdout, -1) {
		p.instances = append(p.instances, m[1])
	}
	if m := clusterDir.FindStringSubmatch(p.stdout); m != nil {
		p.dir = m[1]
	} else if os.Getenv("LEARN_TEST_DATABASE") == "" {
		t.Fatalf("no cluster directory in:\n%s", p.stdout)
	}
	return p
}

// stop sends sig and returns the exit code.
func (p *serveProc) stop(sig os.Signal) int {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	return p.wait()
}

func (p *serveProc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.t.Fatalf("learn serve still runs 30 s after the signal\nstderr:\n%s", p.stderr)
	}
	if ee, ok := errors.AsType[*exec.ExitError](p.waitErr); ok {
		return ee.ExitCode()
	}
	if p.waitErr != nil {
		p.t.Fatal(p.waitErr)
	}
	return 0
}

// waitStderr waits until stderr contains want, reading it again at each
// write to it; it fails once learn serve has ended without it.
func (p *serveProc) waitStderr(want string) {
	p.t.Helper()
	guard, stop := uitest.Guard(p.t)
	defer stop()
	for {
		changed := p.stderr.Changed()
		if strings.Contains(p.stderr.String(), want) {
			return
		}
		select {
		case <-changed:
		case <-p.done:
			if !strings.Contains(p.stderr.String(), want) {
				p.t.Fatalf("learn serve ended; stderr never showed %q:\n%s", want, p.stderr)
			}
			return
		case <-guard:
			p.t.Fatalf("stderr never showed %q:\n%s", want, p.stderr)
		}
	}
}

// answer is a decoded answer of POST /bookings: a BookResponse (a replay
// by its header Idempotent-Replayed) or problem details.
type answer struct {
	status   int
	instance string // the front door's X-Learn-Instance, "" from an instance
	Booking  api.BookingJSON
	Replayed bool
	Error    *api.Error
}

func book(t *testing.T, base, token, key, body string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/bookings", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(api.HeaderIdempotencyKey, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a answer
	if err := decodeAnswer(resp, &a); err != nil {
		t.Fatalf("POST %s/bookings: %v", base, err)
	}
	return a
}

// decodeAnswer reads resp into a: a 200's booking, marked a replay by
// Idempotent-Replayed, or problem details.
func decodeAnswer(resp *http.Response, a *answer) error {
	*a = answer{status: resp.StatusCode, instance: resp.Header.Get(headerInstance)}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		a.Error, err = api.ParseProblem(b)
		return err
	}
	var br api.BookResponse
	if err := json.Unmarshal(b, &br); err != nil {
		return fmt.Errorf("%d, body not JSON: %w", resp.StatusCode, err)
	}
	a.Booking, a.Replayed = br.Booking, resp.Header.Get(api.HeaderReplayed) == "true"
	return nil
}

func getJSON(t *testing.T, url, token string, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// assertServeLeftNothing checks that the cluster is gone, or, on an existing
// server, that no schema of learn's is left.
func assertServeLeftNothing(t *testing.T, p *serveProc) {
	t.Helper()
	if p.dir != "" {
		assertGone(t, p.dir)
		return
	}
	if n := learnSchemasOf(t, os.Getenv("LEARN_TEST_DATABASE"), p.cmd.Process.Pid); n != 0 {
		t.Errorf("%d learn_ schemas left behind", n)
	}
}

// learn serve as a workshop runs it, from the built binary (built once).
func TestServe(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	bin := buildLearn(t)
	t.Run("books, replays and stops cleanly on Ctrl-C", func(t *testing.T) { testServeSession(t, bin) })
	t.Run("stops cleanly on SIGTERM", func(t *testing.T) { testServeSIGTERM(t, bin) })
	t.Run("a busy address says what to do", func(t *testing.T) { testServeBusyAddress(t, bin) })
}

// The workshop's session, as the lesson tells it: book with a fresh key,
// repeat it (a replay, answered by the other API instance), the same key with
// another quantity (409), the same key sent to each instance's own port (the
// same booking), a request still in flight at Ctrl-C (it finishes); then
// exit 0 and nothing left behind.
func testServeSession(t *testing.T, bin string) {
	p := startServe(t, bin, "--addr", "127.0.0.1:0", "--instances", "2")
	for _, want := range []string{
		"Bearer tok-ada", "Bearer tok-ben",
		"KEY=$(uuidgen 2>/dev/null || cat /proc/sys/kernel/random/uuid)",
		`-H "Authorization: Bearer tok-ada" -H "Idempotency-Key: $KEY" -d '{"event_id": 1, "quantity": 2}'`,
		`-H "Idempotency-Key: $KEY" -d '{"event_id": 1, "quantity": 3}'`,
		"Run it again: same booking, replayed",
		"409 " + engine.CodeKeyReused,
		"curl -s " + p.front + "/events",
		"curl -s " + p.front + `/bookings -H "Authorization: Bearer tok-ada"`,
		"learn serve 2>&1 | grep replayed",
	} {
		if !strings.Contains(p.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, p.stdout)
		}
	}
	if len(p.instances) != 2 || p.instances[0] == p.instances[1] || p.instances[0] == p.front {
		t.Fatalf("instances %v, front door %s", p.instances, p.front)
	}

	key := uuid.NewString()
	first := book(t, p.front, api.TokenAda, key, `{"event_id": 1, "quantity": 2}`)
	if first.status != 200 || first.Replayed || first.Booking.ID == "" || first.Booking.UserID != "ada" {
		t.Fatalf("first booking: %+v", first)
	}
	again := book(t, p.front, api.TokenAda, key, `{"event_id": 1, "quantity": 2}`)
	if again.status != 200 || !again.Replayed || again.Booking.ID != first.Booking.ID {
		t.Fatalf("repeat: %+v, want a replay of %s", again, first.Booking.ID)
	}
	if first.instance == "" || again.instance == "" || first.instance == again.instance {
		t.Errorf("the front door sent the two tries to %q and %q, want two instances", first.instance, again.instance)
	}
	other := book(t, p.front, api.TokenAda, key, `{"event_id": 1, "quantity": 3}`)
	if other.status != 409 || other.Error == nil || other.Error.Code != engine.CodeKeyReused || other.Error.Message != engine.MsgKeyReused {
		t.Fatalf("same key, quantity 3: %+v", other)
	}

	// One intent of ben's, its tries sent straight to each instance.
	benKey := uuid.NewString()
	var ids []string
	for i, base := range p.instances {
		a := book(t, base, api.TokenBen, benKey, `{"event_id": 1, "quantity": 1}`)
		if a.status != 200 || a.Replayed != (i > 0) {
			t.Fatalf("try %d at %s: %+v", i+1, base, a)
		}
		ids = append(ids, a.Booking.ID)
	}
	if ids[0] != ids[1] || ids[0] == first.Booking.ID {
		t.Errorf("ben's tries got bookings %v", ids)
	}

	var events []engine.EventRow
	getJSON(t, p.front+"/events", "", &events)
	if len(events) != 1 || events[0].Name != "Workshop night" || events[0].SeatsLeft != 100-2-1 {
		t.Errorf("events = %+v, want Workshop night with 97 seats left", events)
	}
	var mine []engine.BookingRow
	getJSON(t, p.front+"/bookings", api.TokenAda, &mine)
	if len(mine) != 1 || mine[0].ID != first.Booking.ID {
		t.Errorf("ada's bookings = %+v", mine)
	}

	// A request in flight at Ctrl-C: the headers and half the body are in,
	// the rest comes after the signal, and the answer still arrives. The
	// front door reads the whole body before it passes a request on; its
	// "100 Continue" says that it has begun to.
	lateKey := uuid.NewString()
	body := `{"event_id": 1, "quantity": 4}`
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.front, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /bookings HTTP/1.1\r\nHost: learn\r\nAuthorization: Bearer %s\r\n%s: %s\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n",
		api.TokenAda, api.HeaderIdempotencyKey, lateKey, len(body))
	br := bufio.NewReader(conn)
	if cont, err := http.ReadResponse(br, nil); err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("no 100 Continue: %v %v", cont, err)
	}
	if _, err := io.WriteString(conn, body[:10]); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	p.waitStderr("stopping")
	if _, err := io.WriteString(conn, body[10:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v\nstderr:\n%s", err, p.stderr)
	}
	var late answer
	err = decodeAnswer(resp, &late)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || late.Replayed || late.Booking.Quantity != 4 {
		t.Errorf("the request in flight: %d %+v %v", resp.StatusCode, late, err)
	}

	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d after Ctrl-C, want 0\nstderr:\n%s", code, p.stderr)
	}
	logs := p.stderr.String()
	for _, want := range []string{
		"replayed for a repeated idempotency key",
		"POST /bookings → api-1", "POST /bookings → api-2",
		`msg="POST /bookings" instance=api-1 status=200`,
		"status=409",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, logs)
		}
	}
	assertServeLeftNothing(t, p)
}

func testServeSIGTERM(t *testing.T, bin string) {
	p := startServe(t, bin, "--addr", "127.0.0.1:0")
	if len(p.instances) != 1 {
		t.Fatalf("instances %v, want 1 by default", p.instances)
	}
	if a := book(t, p.front, api.TokenAda, uuid.NewString(), `{"event_id": 1, "quantity": 2}`); a.status != 200 {
		t.Fatalf("booking: %+v", a)
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0\nstderr:\n%s", code, p.stderr)
	}
	assertServeLeftNothing(t, p)
}

// A busy --addr is reported before anything starts: exit 1, the address
// named, a way out suggested, no PostgreSQL started.
func testServeBusyAddress(t *testing.T, bin string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr}, serveDBArgs()...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	msg := stderr.String()
	if code != 1 || !strings.Contains(msg, addr+" is already in use") || !strings.Contains(msg, "--addr 127.0.0.1:0") {
		t.Errorf("code %d, stderr %q", code, msg)
	}
	if stdout.Len() != 0 || strings.Contains(msg, "PostgreSQL") {
		t.Errorf("started something: stdout %q, stderr %q", stdout.String(), msg)
	}
}

func TestServeBadCommandLines(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--instances", "0"}, "--instances must be from 1 to 8, got 0"},
		{[]string{"--instances", "9"}, "--instances must be from 1 to 8, got 9"},
		{[]string{"--instances", "-1"}, "--instances must be from 1 to 8"},
		{[]string{"--instances", "two"}, `--instances must be a whole number from 1 to 8, got "two"`},
		{[]string{"--addr", "8080"}, "is not host:port"},
		{[]string{"--addr", "127.0.0.1:99999"}, `--addr "127.0.0.1:99999" is not host:port with a port from 0 to 65535`},
		{[]string{"--seats", "0"}, "--seats must be from 1 to 1000000, got 0"},
		{[]string{"--seats", "lots"}, `--seats must be a whole number from 1 to 1000000, got "lots"`},
		{[]string{"now"}, `unknown scenario "now"`},
		{[]string{"last-seats", "now"}, "serve takes at most one scenario name"},
		{[]string{"--set", "retry=none"}, "retry is the browser client's switch, not the server's"},
		{[]string{"--set", "lookup=sometimes"}, "switch lookup has no value \"sometimes\""},
		{[]string{"--variant", "broken"}, "--variant needs a scenario name"},
		{[]string{"--set", "lookup=none", "last-seats"}, "not both"},
		{[]string{"--variant", "broken", "new-key-per-retry"}, "client-key=per-retry is the browser client's switch"},
		{[]string{"--variant", "broken", "replay-after-sellout"}, "has no broken variant"},
		{[]string{"--instances", "3", "--instance-addr", "127.0.0.1:0", "--instance-addr", "127.0.0.1:0"}, "--instances 3 and 2 --instance-addr"},
		{[]string{"--instance-addr", "8081"}, `--instance-addr "8081" is not host:port`},
		{[]string{"--set", "client-key=per-intent"}, "client-key is the browser client's switch"},
		{[]string{"--addr", "127.0.0.1:18095", "--instance-addr", "127.0.0.1:18095"}, "is given twice (it is --addr's already)"},
		{[]string{"--instances", "2", "--instance-addr", "127.0.0.1:18091", "--instance-addr", "127.0.0.1:18091"}, "given twice"},
		{[]string{"--postgres", "cloud"}, "auto"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, append([]string{"serve"}, tt.args...)...)
		if code != 2 || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("learn serve %v: code %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errs, tt.want)
		}
	}
}
