package engine

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
)

// benchSeats is the seat count of the benchmark's one event: enough that it
// never sells out, so every new intent books.
const benchSeats = 2_000_000_000

// The shape of BenchmarkBookTicket's comparison, as flags of the test
// binary (go test -bench BookTicket ./sim/engine -args -book.rounds=9).
var (
	bookRounds = flag.Int("book.rounds", 15, "BenchmarkBookTicket: interleaved rounds of the engine and of pgbench")
	bookRound  = flag.Duration("book.round", 300*time.Millisecond, "BenchmarkBookTicket: about how long each side runs in a round")
)

// BenchmarkBookTicket measures Engine.BookTicket (the engine, not HTTP, and
// no trace) against pgbench running the same transaction on the same
// server, in interleaved rounds: each round runs pgbench for
// about -book.round, then the engine for as long (the order alternates from
// round to round), and takes the ratio of the two throughputs. The
// reported ratio is the median of the rounds' ratios, so a pause of the
// machine during one round moves one ratio, not the result; ratio-min and
// ratio-max show the spread. Each side keeps its own schema for all rounds,
// so both tables grow alike.
//
//   - distinct/clients=C: C goroutines book new intents (quantity 1, a
//     fresh idempotency key each, one user per goroutine); pgbench runs the
//     new-booking transaction at C clients. bookings/s against pgbench-tps.
//   - copies/n=N: N goroutines sending N copies of each new intent (same
//     user, same key), the copies of one intent in flight together, so one
//     creates the booking and N-1 replay it (see copiesLoad); pgbench runs
//     the same mix at N clients (the new-booking script with weight 1, the
//     replay script with weight N-1). requests/s against pgbench-tps.
//
// All intents book one event, so every transaction waits for its row lock:
// the numbers are the throughput of one contended event, as in the lesson.
// b.N is not used: one call runs every round (run with -benchtime=1x).
// Without pgbench the benchmark is skipped.
//
//	go test -run '^$' -bench BookTicket -benchtime=1x ./sim/engine
func BenchmarkBookTicket(b *testing.B) {
	bin, err := findPgbench()
	if err != nil {
		b.Skip(err)
	}
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("distinct/clients=%d", clients), func(b *testing.B) {
			st, eng, eventID := benchStage(b, clients)
			var created atomic.Int64
			ours := distinctLoad(b, eng, eventID, clients, &created)
			ours(int64(20 * clients)) // warm: connections, statement caches
			sc, pgEvent := pgbenchSchema(b)
			theirs := func(perClient string) pgbenchRun {
				return pgbenchDistinct(b, bin, sc, pgEvent, clients, perClient)
			}
			compareRounds(b, ours, theirs, clients, "bookings/s")
			checkBenchRows(b, st, eventID, created.Load())
		})
	}
	for _, n := range []int{10, 32} {
		b.Run(fmt.Sprintf("copies/n=%d", n), func(b *testing.B) {
			st, eng, eventID := benchStage(b, n)
			var created atomic.Int64
			ours := copiesLoad(b, eng, eventID, n, &created)
			ours(int64(20 * n))
			sc, pgEvent := pgbenchSchema(b)
			theirs := func(perClient string) pgbenchRun { return pgbenchCopies(b, bin, sc, pgEvent, n, perClient) }
			compareRounds(b, ours, theirs, n, "requests/s")
			checkBenchRows(b, st, eventID, created.Load())
		})
	}
}

// load has the engine answer n requests and returns how long it took.
type load func(n int64) time.Duration

// compareRounds runs -book.rounds interleaved rounds of ours and theirs
// (pgbench at clients clients, given its -t or -T option) and reports the
// medians: ours in unit, pgbench-tps, ratio (ours ÷ pgbench), and the
// spread of the ratio (ratio-min, ratio-max). It also reports what each
// side's client process spent per transaction, where the time goes when
// the ratio is low: CPU time in µs (cpu-µs/op and pgbench-cpu-µs/tx, user
// and system) and context switches (switches/op and pgbench-switches/tx,
// voluntary and involuntary), from getrusage(2). Ours is the whole test
// process, Go's runtime included.
func compareRounds(b *testing.B, ours load, theirs func(limit string) pgbenchRun, clients int, unit string) {
	b.Helper()
	// How many transactions take pgbench about -book.round.
	probe := theirs("-T1").tps
	perClient := max(int64(probe*bookRound.Seconds())/int64(clients), 1)
	total := perClient * int64(clients)
	var oursPerSec, tps, ratios []float64
	var oursCost, theirCost []clientCost
	runOurs := func() float64 {
		before := selfUsage()
		d := ours(total)
		oursCost = append(oursCost, selfUsage().since(before, total))
		return float64(total) / d.Seconds()
	}
	runTheirs := func() float64 {
		run := theirs("-t" + strconv.FormatInt(perClient, 10))
		theirCost = append(theirCost, run.cost)
		return run.tps
	}
	b.ResetTimer()
	for r := range max(*bookRounds, 1) {
		var o, t float64
		if r%2 == 0 {
			o, t = runOurs(), runTheirs()
		} else {
			t = runTheirs()
			o = runOurs()
		}
		if b.Failed() {
			b.FailNow()
		}
		oursPerSec, tps, ratios = append(oursPerSec, o), append(tps, t), append(ratios, o/t)
	}
	b.StopTimer()
	b.ReportMetric(median(oursPerSec), unit)
	b.ReportMetric(median(tps), "pgbench-tps")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(slices.Min(ratios), "ratio-min")
	b.ReportMetric(slices.Max(ratios), "ratio-max")
	b.ReportMetric(1e9/median(oursPerSec), "ns/op")
	cpu := func(c clientCost) float64 { return c.cpuMicros }
	switches := func(c clientCost) float64 { return c.switches }
	b.ReportMetric(median(mapCosts(oursCost, cpu)), "cpu-µs/op")
	b.ReportMetric(median(mapCosts(theirCost, cpu)), "pgbench-cpu-µs/tx")
	b.ReportMetric(median(mapCosts(oursCost, switches)), "switches/op")
	b.ReportMetric(median(mapCosts(theirCost, switches)), "pgbench-switches/tx")
}

// clientCost is what a client process spent per transaction: CPU time
// (user and system) in µs, and context switches (voluntary and
// involuntary).
type clientCost struct{ cpuMicros, switches float64 }

func mapCosts(cs []clientCost, f func(clientCost) float64) []float64 {
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = f(c)
	}
	return out
}

// usage is a process's CPU time and context switches so far.
type usage struct {
	cpu      time.Duration
	switches int64
}

// usageOf reads ru.
func usageOf(ru *syscall.Rusage) usage {
	return usage{
		cpu:      time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		switches: int64(ru.Nvcsw + ru.Nivcsw),
	}
}

// selfUsage is this process's usage so far (getrusage RUSAGE_SELF: every
// thread).
func selfUsage() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return usageOf(&ru)
}

// since is the cost per transaction of the n transactions made between
// before and u.
func (u usage) since(before usage, n int64) clientCost {
	return clientCost{
		cpuMicros: float64((u.cpu - before.cpu).Microseconds()) / float64(n),
		switches:  float64(u.switches-before.switches) / float64(n),
	}
}

// median of xs, which is not empty.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// benchStage returns a fresh world with one event that never sells out,
// and its engine, whose pool holds a connection for every client.
func benchStage(b *testing.B, clients int) (*world, *Engine, int64) {
	b.Helper()
	w := openWorld(b, worldConfig{MaxConns: clients + 2})
	id, err := w.AddEvent(b.Context(), "Benchmark night", benchSeats, w.Clock.Now().Add(365*24*time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	return w, w.Engine, id
}

// distinctLoad books new intents on clients goroutines, each goroutine its
// own user, and checks that none is answered as a replay. Every request
// creates a booking, counted in created.
func distinctLoad(b *testing.B, eng *Engine, eventID int64, clients int, created *atomic.Int64) load {
	ctx := b.Context()
	return func(n int64) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		t0 := time.Now()
		for c := range clients {
			wg.Go(func() {
				req := Request{UserID: "c" + strconv.Itoa(c), EventID: eventID, Quantity: 1}
				for next.Add(1) <= n {
					req.Key = uuid.New()
					res, err := eng.BookTicket(ctx, req)
					if err != nil {
						b.Errorf("book %+v: %v", req, err)
						return
					}
					if res.Replayed {
						b.Errorf("a new key %s was answered as a replay of %s", req.Key, res.Booking.PublicID())
						return
					}
					created.Add(1)
				}
			})
		}
		wg.Wait()
		return time.Since(t0)
	}
}

// copiesLoad sends n copies of each new intent from n goroutines that,
// like pgbench's clients, never wait for one another: request s of a run is
// copy s mod n of intent s ÷ n, taken by whichever goroutine is free, so
// the n copies of an intent are in flight together and race for the row
// lock. (Rounds that waited for all n copies before sending the next
// intent left n-1 goroutines idle at the end of every round, a pause that
// pgbench's mix never makes.) It checks that for each intent exactly one
// copy created the booking (counted in created) and the others replayed
// that booking.
func copiesLoad(b *testing.B, eng *Engine, eventID int64, n int, created *atomic.Int64) load {
	ctx := b.Context()
	return func(total int64) time.Duration {
		intents := max(total/int64(n), 1)
		keys := make([]uuid.UUID, intents)
		for i := range keys {
			keys[i] = uuid.New()
		}
		ids := make([]atomic.Int64, intents)
		creations := make([]atomic.Int32, intents)
		var next atomic.Int64
		var wg sync.WaitGroup
		t0 := time.Now()
		for range n {
			wg.Go(func() {
				for s := next.Add(1) - 1; s < intents*int64(n); s = next.Add(1) - 1 {
					i := s / int64(n)
					req := Request{UserID: "copy", EventID: eventID, Quantity: 1, Key: keys[i]}
					res, err := eng.BookTicket(ctx, req)
					if err != nil {
						b.Errorf("copy %d of %s: %v", s%int64(n), req.Key, err)
						return
					}
					if !res.Replayed {
						creations[i].Add(1)
					}
					if !ids[i].CompareAndSwap(0, res.Booking.ID) && ids[i].Load() != res.Booking.ID {
						b.Errorf("copies of key %s got bookings %d and %d; want one booking", req.Key, ids[i].Load(), res.Booking.ID)
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(t0)
		for i := range creations {
			if c := creations[i].Load(); c != 1 && !b.Failed() {
				b.Errorf("%d copies of key %s: %d created a booking; want 1 creation and %d replays of it", n, keys[i], c, n-1)
			}
		}
		created.Add(intents)
		return elapsed
	}
}

// checkBenchRows checks, outside the timer, that the stage holds exactly
// want bookings and that the event lost exactly that many seats.
func checkBenchRows(b *testing.B, st *world, eventID, want int64) {
	b.Helper()
	var rows, left int64
	err := st.Admin.QueryRow(b.Context(), `SELECT (SELECT count(*) FROM bookings), (SELECT seats_left FROM events WHERE id = $1)`,
		eventID).Scan(&rows, &left)
	if err != nil {
		b.Fatal(err)
	}
	if rows != want || left != benchSeats-want {
		b.Fatalf("%d bookings and %d seats left; want %d bookings and %d seats left", rows, left, want, benchSeats-want)
	}
}
