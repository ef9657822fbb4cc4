package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// postmasterOf reads the pid of the postmaster of the cluster in dir.
func postmasterOf(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pm, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// decodeAnswer reads resp's JSON body into a.

// bookUntilAnswered books one intent the way a client that follows the
// API does: the same key on every try, again after Retry-After while the
// answer is 503, again at once when the connection failed; it returns the
// booking of the 200, and every 503's code.
func bookUntilAnswered(t *testing.T, base, key, body string) (api.BookingJSON, []string) {
	var codes []string
	for try := 0; ; try++ {
		if try == 100 {
			t.Errorf("key %s: no 200 in 100 tries: %v", key, codes)
			return api.BookingJSON{}, codes
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/bookings", strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return api.BookingJSON{}, codes
		}
		req.Header.Set("Authorization", "Bearer "+api.TokenAda)
		req.Header.Set(api.HeaderIdempotencyKey, key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue // the front door's connection to an instance, cut by the outage
		}
		var a answer
		err = decodeAnswer(resp, &a)
		resp.Body.Close()
		switch {
		case err != nil:
			t.Errorf("key %s: %d, not JSON: %v", key, resp.StatusCode, err)
			return api.BookingJSON{}, codes
		case a.status == 200:
			return a.Booking, codes
		case a.status == 503:
			codes = append(codes, a.Error.Code)
			after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			<-time.After(time.Duration(after) * time.Second) // the client's backoff, as the answer asks
		default:
			t.Errorf("key %s: %d %+v", key, a.status, a.Error)
			return api.BookingJSON{}, codes
		}
	}
}

// learn serve whose own PostgreSQL is killed outright (kill -9 of its
// postmaster) while bookings come in: it says so at once, at error level,
// with the end of PostgreSQL's log, starts it again on the same data and
// says when it is back. Every intent, tried with its key until it is
// answered 200, has exactly one booking, and the same key answers with
// the same booking afterwards: nothing lost, nothing doubled. Then it
// stops on SIGTERM with 0, leaving nothing.
func TestServeWhosePostgresIsKilledStartsItAgainAndLosesNothing(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	if os.Getenv("LEARN_TEST_DATABASE") != "" {
		t.Skip("learn serve runs on LEARN_TEST_DATABASE here, not on a cluster of its own")
	}
	p := startServe(t, buildLearn(t), "--addr", "127.0.0.1:0", "--instances", "2", "--seats", "100000")
	body := `{"event_id": 1, "quantity": 1}`
	const workers, before, after = 6, 5, 5
	type intent struct {
		key     string
		booking api.BookingJSON
	}
	var mu sync.Mutex
	var intents []intent
	var codes []string
	run := func(n int) {
		for range n {
			key := uuid.NewString()
			b, c := bookUntilAnswered(t, p.front, key, body)
			mu.Lock()
			intents = append(intents, intent{key, b})
			codes = append(codes, c...)
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { run(before) })
	}
	pm := postmasterOf(t, p.dir)
	if err := syscall.Kill(pm, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.waitStderr(fmt.Sprintf("the database is down: learn's PostgreSQL (pid %d) was killed by signal 9", pm))
	p.waitStderr("PostgreSQL's log: ")
	p.waitStderr("the database is up again, on the same data")
	for range workers {
		wg.Go(func() { run(after) })
	}
	wg.Wait()
	t.Logf("503 codes met: %v", codes)
	for _, c := range codes {
		if c != api.CodeDatabaseDown && c != api.CodeDatabaseUnavailable {
			t.Errorf("a 503 %s: want %s (or, before learn noticed, %s)", c, api.CodeDatabaseDown, api.CodeDatabaseUnavailable)
		}
	}
	if !strings.Contains(p.stderr.String(), "level=ERROR msg=\"the database is down") {
		t.Errorf("the outage is not at error level:\n%s", p.stderr)
	}

	ids := map[string]bool{}
	for _, in := range intents {
		if ids[in.booking.ID] {
			t.Errorf("booking %s answered for two intents", in.booking.ID)
		}
		ids[in.booking.ID] = true
		again := book(t, p.front, api.TokenAda, in.key, body)
		if again.status != 200 || !again.Replayed || again.Booking.ID != in.booking.ID {
			t.Errorf("key %s again: %d %+v, want a replay of %s", in.key, again.status, again, in.booking.ID)
		}
	}
	var mine []api.BookingJSON
	getJSON(t, p.front+"/bookings", api.TokenAda, &mine)
	if len(mine) != len(intents) || len(intents) != workers*(before+after) {
		t.Errorf("%d bookings stored for %d intents (%d made)", len(mine), len(intents), workers*(before+after))
	}
	var events []engine.EventRow
	getJSON(t, p.front+"/events", "", &events)
	if len(events) != 1 || events[0].SeatsLeft != 100000-len(intents) {
		t.Errorf("events %+v, want %d seats taken", events, len(intents))
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d after SIGTERM\n%s", code, p.stderr)
	}
	assertGone(t, p.dir)
}

// learn serve whose own PostgreSQL exits and cannot start again (here its
// data directory's permissions, which PostgreSQL checks as it starts, were
// opened to everyone, as a full disk would fail its recovery) stops by
// itself with exit 1: it says that the database is gone, why, and the end
// of PostgreSQL's log, and leaves nothing.
func TestServeWhosePostgresCannotStartAgainExits1(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	if os.Getenv("LEARN_TEST_DATABASE") != "" {
		t.Skip("learn serve runs on LEARN_TEST_DATABASE here, not on a cluster of its own")
	}
	p := startServe(t, buildLearn(t), "--addr", "127.0.0.1:0")
	if err := os.Chmod(filepath.Join(p.dir, "data"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(postmasterOf(t, p.dir), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != exitFailure {
		t.Errorf("exit %d, want %d\n%s", code, exitFailure, p.stderr)
	}
	for _, want := range []string{"the database is gone", "could not start it again", "PostgreSQL's log: ", "permissions", "learn serve stopped"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, p.stderr)
		}
	}
	assertGone(t, p.dir)
}
