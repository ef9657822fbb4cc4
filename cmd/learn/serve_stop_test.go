package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/internal/serve"
	"github.com/learn-idempotency/learn/internal/uitest"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim/api"
)

// learn serve stops as it says: at the signal, requests in flight get the
// drain to finish; clients still sending their bodies then are cut, at the
// front door and at an API instance alike (their connections closed), one
// line per listener counts them, "stopped" is the last line of the log,
// nothing is logged as an error, and it returns 0. Run in process, with a
// short drain, on a schema of the test server; on every interface, so the
// warning about it is in the log, which has no line but slog's.
func TestServeStopsAsItSays(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr uitest.Buffer
	cfg := serve.Config{Addr: "0.0.0.0:0", Instances: 2, Seats: 100, Drain: 200 * time.Millisecond, Limits: api.WorkshopLimits()}
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := serve.Run(ctx, cfg, pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: testDB.ConnString()}, outW, &stderr)
		outW.Close()
		done <- result{code, err}
	}()
	var intro strings.Builder
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		intro.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "learn serve: ready") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	m := serveListening.FindStringSubmatch(intro.String())
	if m == nil {
		t.Fatalf("no listening line:\n%s\nstderr:\n%s", intro.String(), stderr.String())
	}
	front := m[1]
	var instances []string
	for _, m := range serveInstance.FindAllStringSubmatch(intro.String(), -1) {
		instances = append(instances, m[1])
	}

	// Clients that sent their headers and half their body, and saw the
	// listener begin to read it (100 Continue): 3 at the front door, 1 at
	// each API instance. And one kept-alive connection, idle.
	body := `{"event_id": 1, "quantity": 1}`
	var slow []net.Conn
	for i, base := range []string{front, front, front, instances[0], instances[1]} {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /bookings HTTP/1.1\r\nHost: learn\r\nAuthorization: Bearer %s\r\n%s: %s\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n",
			api.TokenAda, api.HeaderIdempotencyKey, uuid.NewString(), len(body))
		if cont, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || cont.StatusCode != http.StatusContinue {
			t.Fatalf("slow client %d at %s: no 100 Continue: %v %v", i, base, cont, err)
		}
		if _, err := io.WriteString(c, body[:10]); err != nil {
			t.Fatal(err)
		}
		slow = append(slow, c)
	}
	idle, err := net.Dial("tcp", strings.TrimPrefix(front, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /events HTTP/1.1\r\nHost: learn\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /events: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)

	cancel() // as Ctrl-C does
	res := <-done
	if res.code != exitOK || res.err != nil {
		t.Errorf("serve.Run: %d %v, want 0", res.code, res.err)
	}
	for i, c := range append(slow, idle) {
		if _, err := io.ReadAll(c); err != nil && !strings.Contains(err.Error(), "reset") {
			t.Errorf("connection %d: %v", i, err)
		}
	}
	log := stderr.String()
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `msg="stopped; removing the database"`) {
		t.Errorf("the last line is %q, want the stopped line:\n%s", last, log)
	}
	for _, want := range []string{
		`msg="front door: 3 requests still in flight were cut (context deadline exceeded)"`,
		`msg="api-1: 1 request still in flight was cut (context deadline exceeded)"`,
		`msg="api-2: 1 request still in flight was cut (context deadline exceeded)"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "level=ERROR") {
		t.Errorf("errors in the log:\n%s", log)
	}
	if !strings.Contains(log, `level=WARN msg="0.0.0.0:0 listens on every network interface`) {
		t.Errorf("no warning about every interface:\n%s", log)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "time=") {
			t.Errorf("a line not from the logger: %q", l)
		}
	}
}
