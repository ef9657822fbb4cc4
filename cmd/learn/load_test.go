package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// The load test's knobs. LEARN_LOAD sets the duration (e.g. 30s, the full
// run); without it the test runs loadShort, short enough for CI.
// LEARN_LOAD_RATE sets the requests per second, LEARN_LOAD_SLOW the slow
// clients that hold connections meanwhile.
const (
	loadShort       = 3 * time.Second
	loadDefaultRate = 150
	loadDefaultSlow = 32
)

// loadIntent is a booking intent of the load: whose, its key and quantity.
type loadIntent struct {
	token string
	key   string
	qty   int
}

// loadMix makes the load's requests: fresh keys (a new intent), replays of
// an intent already sent (the same key and body), the same key with
// another quantity (a 409 once the first booked), and reads. Safe for
// vegeta's workers to call at once.
type loadMix struct {
	front   string
	eventID int64
	mu      sync.Mutex
	rng     *rand.Rand
	intents []loadIntent
	counts  map[string]int // requests of each kind
}

func (m *loadMix) target(tgt *vegeta.Target) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	booking := func(in loadIntent, qty int) {
		tgt.Method, tgt.URL = "POST", m.front+"/bookings"
		tgt.Body = fmt.Appendf(nil, `{"event_id": %d, "quantity": %d}`, m.eventID, qty)
		tgt.Header = http.Header{"Authorization": {"Bearer " + in.token}, api.HeaderIdempotencyKey: {in.key}}
	}
	roll := m.rng.IntN(100)
	switch {
	case roll < 45 || len(m.intents) == 0:
		in := loadIntent{token: api.TokenAda, key: uuid.NewString(), qty: 1 + m.rng.IntN(3)}
		if m.rng.IntN(2) == 1 {
			in.token = api.TokenBen
		}
		m.intents = append(m.intents, in)
		booking(in, in.qty)
		m.counts["fresh key"]++
	case roll < 80:
		in := m.intents[m.rng.IntN(len(m.intents))]
		booking(in, in.qty)
		m.counts["replay"]++
	case roll < 90:
		in := m.intents[m.rng.IntN(len(m.intents))]
		booking(in, in.qty%3+1)
		m.counts["same key, other quantity"]++
	default:
		tgt.Method, tgt.URL, tgt.Body = "GET", m.front+"/events", nil
		tgt.Header = http.Header{"Authorization": {"Bearer " + api.TokenAda}}
		if roll%2 == 1 {
			tgt.URL = m.front + "/bookings"
		}
		m.counts["read"]++
	}
	return nil
}

// slowClients keeps n connections to addr busy until stop is closed: each
// sends a booking's headers and then its body one byte at a time, slower
// than the server's read limit allows, and starts again when the server
// closes it. It counts the connections the server cut and the answers it
// gave them.
type slowClients struct {
	cut, answered408, refused503 atomic.Int64
	wg                           sync.WaitGroup
	mu                           sync.Mutex
	conns                        map[net.Conn]bool
}

func startSlowClients(addr string, n int, stop <-chan struct{}) *slowClients {
	s := &slowClients{conns: map[net.Conn]bool{}}
	for i := range n {
		s.wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				s.mu.Lock()
				s.conns[c] = true
				s.mu.Unlock()
				s.one(c, i, stop)
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}
		})
	}
	return s
}

// one trickles a request on c until the server cuts it or stop is closed.
func (s *slowClients) one(c net.Conn, i int, stop <-chan struct{}) {
	body := `{"event_id": 1, "quantity": 1}`
	if _, err := fmt.Fprintf(c, "POST /bookings HTTP/1.1\r\nHost: learn\r\nAuthorization: Bearer %s\r\n%s: %s\r\nContent-Length: %d\r\n\r\n",
		api.TokenAda, api.HeaderIdempotencyKey, uuid.NewString(), len(body)); err != nil {
		return
	}
	answer := make(chan int, 1) // the status the server answered with, 0 for none
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answer <- 0
			return
		}
		resp.Body.Close()
		answer <- resp.StatusCode
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for sent := 0; ; {
		select {
		case <-stop:
			return
		case code := <-answer:
			s.cut.Add(1)
			switch code {
			case http.StatusRequestTimeout:
				s.answered408.Add(1)
			case http.StatusServiceUnavailable:
				s.refused503.Add(1)
			}
			return
		case <-tick.C:
			if sent < len(body)-1 { // never the last byte
				_, _ = io.WriteString(c, body[sent:sent+1])
				sent++
			}
		}
	}
}

// closeAll closes the connections still open, for the clients to end.
func (s *slowClients) closeAll() {
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a whole number from 1", name, v)
	}
	return n
}

// learn serve --instances 2 under a mixed load from vegeta (fresh keys,
// replays, the same key with another quantity, reads) while slow clients
// hold connections; then the bookings are checked: every key booked at
// most once, every answer for a key the same booking, no seat sold twice.
// It reports throughput, latency and the answers it got; timings are
// reported, never checked. A short run by default (CI); LEARN_LOAD=30s for
// the full one (README, "Test").
func TestServeUnderLoad(t *testing.T) {
	t.Parallel() // see packageTests: which tests run in parallel
	dur := loadShort
	if v := os.Getenv("LEARN_LOAD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("LEARN_LOAD=%q: want a duration such as 30s", v)
		}
		dur = d
	}
	rate, nslow := envInt(t, "LEARN_LOAD_RATE", loadDefaultRate), envInt(t, "LEARN_LOAD_SLOW", loadDefaultSlow)
	// About half the fresh intents find seats: the event sells out half way.
	seats := max(10, int(0.45*float64(rate)*dur.Seconds()))

	bin := buildLearn(t)
	p := startServe(t, bin, "--addr", "127.0.0.1:0", "--instances", "2", "--seats", strconv.Itoa(seats))
	stop := make(chan struct{})
	slow := startSlowClients(strings.TrimPrefix(p.front, "http://"), nslow, stop)

	mix := &loadMix{front: p.front, eventID: 1, rng: rand.New(rand.NewPCG(1, 2)), counts: map[string]int{}}
	atk := vegeta.NewAttacker(vegeta.MaxWorkers(64), vegeta.MaxConnections(64), vegeta.Timeout(30*time.Second))
	var metrics vegeta.Metrics
	type answer struct {
		user, key, id string
		qty           int
		replayed      bool
	}
	var answers []answer
	unexpected := map[string]int{}
	for res := range atk.Attack(mix.target, vegeta.Rate{Freq: rate, Per: time.Second}, dur, "learn serve") {
		metrics.Add(res)
		switch {
		case res.Code == 0 || res.Code >= 500 && res.Code != http.StatusServiceUnavailable:
			unexpected[fmt.Sprintf("%d %s %s", res.Code, res.Error, strings.TrimSpace(string(res.Body)))]++
		case res.Method == "POST" && res.Code == http.StatusOK:
			var br api.BookResponse
			if err := json.Unmarshal(res.Body, &br); err != nil {
				t.Fatalf("a 200 that is not a booking: %s", res.Body)
			}
			answers = append(answers, answer{user: br.Booking.UserID, key: br.Booking.IdempotencyKey, id: br.Booking.ID,
				qty: br.Booking.Quantity, replayed: res.Headers.Get(api.HeaderReplayed) == "true"})
		}
	}
	metrics.Close()
	close(stop)
	slow.closeAll()

	// The bookings as the API shows them, and the seats left.
	var rows []engine.BookingRow
	for _, tok := range []string{api.TokenAda, api.TokenBen} {
		var mine []engine.BookingRow
		getJSON(t, p.front+"/bookings", tok, &mine)
		rows = append(rows, mine...)
	}
	var events []engine.EventRow
	getJSON(t, p.front+"/events", "", &events)

	codes := make([]string, 0, len(metrics.StatusCodes))
	for c, n := range metrics.StatusCodes {
		codes = append(codes, fmt.Sprintf("%s×%d", c, n))
	}
	slices.Sort(codes)
	taken := 0
	for _, r := range rows {
		taken += r.Quantity
	}
	t.Logf("learn serve --instances 2 --seats %d, %s at %d requests/s asked, %d slow clients:", seats, dur, rate, nslow)
	t.Logf("  %d requests (%v), %.1f/s sent, throughput %.1f/s answered 2xx", metrics.Requests, mix.counts, metrics.Rate, metrics.Throughput)
	t.Logf("  latency p50 %s, p90 %s, p99 %s, max %s", metrics.Latencies.P50, metrics.Latencies.P90, metrics.Latencies.P99, metrics.Latencies.Max)
	t.Logf("  answers %s; unexpected (no answer, or 5xx but 503): %d", strings.Join(codes, " "), len(unexpected))
	t.Logf("  slow clients: %d connections cut by the server (%d answered 408, %d refused 503)", slow.cut.Load(), slow.answered408.Load(), slow.refused503.Load())
	t.Logf("  bookings: %d rows, %d seats taken, %d left of %d", len(rows), taken, events[0].SeatsLeft, seats)

	for what, n := range unexpected {
		t.Errorf("%d× %s", n, what)
	}
	// Exactly once: one row per (user, key); every answer for a key names
	// that row, with its quantity; every row was answered (no request went
	// unanswered); and the seats add up.
	byKey := map[string]engine.BookingRow{}
	for _, r := range rows {
		k := r.UserID + "/" + r.Key
		if prev, dup := byKey[k]; dup {
			t.Errorf("key %s booked twice: %s and %s", k, prev.ID, r.ID)
		}
		byKey[k] = r
	}
	firsts := map[string]int{}
	for _, a := range answers {
		r, ok := byKey[a.user+"/"+a.key]
		if !ok || r.ID != a.id || r.Quantity != a.qty {
			t.Errorf("an answer for key %s/%s names %s × %d; the table has %+v", a.user, a.key, a.id, a.qty, r)
		}
		if !a.replayed {
			firsts[a.user+"/"+a.key]++
		}
	}
	for k := range byKey {
		if firsts[k] != 1 && len(unexpected) == 0 {
			t.Errorf("key %s: %d answers say they booked it, want 1", k, firsts[k])
		}
	}
	if left := events[0].SeatsLeft; left < 0 || left+taken != seats {
		t.Errorf("seats: %d left + %d taken, want %d in all", left, taken, seats)
	}
	if code := p.stop(os.Interrupt); code != 0 {
		t.Errorf("exit code %d after Ctrl-C\nstderr:\n%s", code, p.stderr)
	}
	if strings.Contains(p.stderr.String(), "level=ERROR") {
		t.Errorf("errors in the log:\n%s", grepLines(p.stderr.String(), "level=ERROR"))
	}
}

// grepLines returns the lines of s that contain want.
func grepLines(s, want string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, want) {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
	}
	return strings.Join(out, "\n")
}
