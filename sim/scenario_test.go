package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

func runScenario(t *testing.T, name string, opts Options) *Report {
	t.Helper()
	s, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.Prepare(t.Context(), testDatabase(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := run.Close(); err != nil {
			t.Errorf("close run: %v", err)
		}
	}()
	rep, err := run.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// answerCodes writes each answer as its status, with R for a replay,
// sorted: "200", "200R", "409".
func answerCodes(rep *Report) []string {
	var out []string
	for _, a := range rep.Answers {
		c := fmt.Sprint(a.Status)
		if a.Replayed {
			c += "R"
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

func failing(rep *Report) []string {
	var out []string
	for _, inv := range rep.Invariants {
		if !inv.Pass {
			out = append(out, inv.Name)
		}
	}
	slices.Sort(out)
	return out
}

func rep(n int, code string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = code
	}
	return out
}

// Every scenario in every variant gives its listed outcome (issue 3's
// table), with the invariants the broken variant breaks.
func TestEveryScenarioGivesItsOutcome(t *testing.T) {
	tests := []struct {
		name    string
		variant Variant
		copies  int
		answers []string // sorted
		lost    int
		rows    int
		seats   int
		broken  []string // invariants that fail, sorted
	}{
		{"lost-answer", Correct, 0, []string{"200R"}, 1, 1, 2, nil},
		{"lost-answer", Broken, 0, []string{"200"}, 1, 2, 4, []string{InvIntentGetsItsBook, InvOnePerKey, InvOneBookingPerIntent}},
		{"concurrent-copies", Correct, 10, append([]string{"200"}, rep(9, "200R")...), 0, 1, 2, nil},
		{"concurrent-copies", Broken, 10, rep(10, "200"), 0, 10, 20, []string{InvIntentGetsItsBook, InvOnePerKey, InvOneBookingPerIntent, InvOneBookingPerTry}},
		{"copies-repeatable-read", Correct, 10, append([]string{"200"}, rep(9, "200R")...), 0, 1, 2, nil},
		{"copies-repeatable-read", Broken, 10, append(append([]string{"200"}, rep(9, "200R")...), rep(9, "500")...), 0, 1, 2, []string{InvNoServerError}},
		{"page-reload", Correct, 0, []string{"200R"}, 1, 1, 2, nil},
		{"page-reload", Broken, 0, []string{"200"}, 1, 2, 4, []string{InvIntentGetsItsBook, InvOneBookingPerIntent}},
		{"request-in-flight", Correct, 0, []string{"200", "200R", "409"}, 0, 1, 2, nil},
		{"late-retry", Correct, 0, []string{"200R"}, 1, 1, 2, nil},
		{"retry-storm", Correct, 0, append(rep(stormClients, "200"), rep(stormClients, "503")...), 0, stormClients, stormClients, nil},
		{"retry-storm", Broken, 0, append(rep(stormClients, "200"), rep(stormClients, "503")...), 0, stormClients, stormClients, []string{InvBacksOff}},
		{"late-retry", Broken, 0, []string{"200"}, 1, 2, 4, []string{InvIntentGetsItsBook, InvOneBookingPerIntent}},
		{"request-in-flight", Broken, 0, []string{"200", "409"}, 0, 1, 2, []string{InvIntentGetsItsBook, InvNoAnswerRetried}},
		{"different-quantity", Correct, 0, []string{"200", "409"}, 0, 1, 2, nil},
		{"different-quantity", Broken, 0, []string{"200", "200R"}, 0, 1, 2, []string{InvAnswerMatches}},
		{"last-seats", Correct, 0, []string{"200R"}, 1, 1, 2, nil},
		{"last-seats", Broken, 0, []string{"409"}, 1, 1, 2, []string{InvIntentGetsItsBook}},
		{"new-key-per-retry", Correct, 0, []string{"200R"}, 1, 1, 2, nil},
		{"new-key-per-retry", Broken, 0, []string{"200"}, 1, 2, 4, []string{InvIntentGetsItsBook, InvOneBookingPerIntent}},
		{"key-reuse-two-events", Correct, 0, []string{"200", "409"}, 0, 1, 2, nil},
		{"key-reuse-two-events", Broken, 0, []string{"200", "200"}, 0, 2, 4, []string{InvOnePerKey}},
		{"lookup-before-lock", Correct, 0, []string{"200", "200R"}, 0, 1, 2, nil},
		{"lookup-before-lock", Broken, 0, []string{"200", "200"}, 0, 2, 4, []string{InvIntentGetsItsBook, InvOnePerKey, InvOneBookingPerIntent, InvOneBookingPerTry}},
		{"two-users-same-key", Correct, 0, []string{"200", "200"}, 0, 2, 4, nil},
		{"two-users-same-key", Broken, 0, []string{"200", "200R"}, 0, 1, 2, []string{InvAnswerIsOwn}},
		{"replay-after-sellout", Correct, 0, []string{"200", "200R"}, 1, 2, 4, nil},
		{"no-retry-on-4xx", Correct, 0, []string{"409"}, 0, 0, 0, nil},
		{"no-retry-on-4xx", Broken, 0, []string{"409", "409", "409"}, 0, 0, 0, []string{InvRefusalFinal}},
		{"retries-exhausted", Correct, 0, []string{"200", "500", "500", "500"}, 0, 1, 2, nil},
		{"crash-before-commit", Correct, 0, []string{"200"}, 0, 1, 2, nil},
		{"other-instance", Correct, 0, []string{"200R"}, 1, 1, 2, nil},
		{"other-instance", Broken, 0, []string{"200"}, 1, 2, 4, []string{InvIntentGetsItsBook, InvOnePerKey, InvOneBookingPerIntent}},
		{"redis-ttl", Correct, 0, []string{"200R", "200R"}, 1, 2, 4, nil},
		{"redis-ttl", Broken, 0, []string{"200", "200"}, 1, 4, 8, []string{InvIntentGetsItsBook, InvOnePerKey, InvOneBookingPerIntent}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.name+"/"+string(tt.variant)] = true
		t.Run(tt.name+"/"+string(tt.variant), func(t *testing.T) {
			t.Parallel()
			r := runScenario(t, tt.name, Options{Variant: tt.variant, Copies: tt.copies})
			got := answerCodes(r)
			if tt.name == "copies-repeatable-read" && tt.variant == Broken {
				// Nothing holds the first copy before its COMMIT: a copy
				// that reaches the row after it reads the booking at once.
				// Each that waited for the lock got 500, then a replay.
				n500 := slices.Index(got, "500")
				if n500 < 0 {
					t.Errorf("answers %v, want a 500 at least", got)
				} else {
					got = got[:n500] // the 200 and the 9 replays
				}
				tt.answers = tt.answers[:10]
			}
			if !slices.Equal(got, tt.answers) {
				t.Errorf("answers %v, want %v", got, tt.answers)
			}
			if r.Lost != tt.lost || r.BookingRows != tt.rows || r.SeatsTaken != tt.seats {
				t.Errorf("lost=%d rows=%d seats=%d, want %d, %d, %d", r.Lost, r.BookingRows, r.SeatsTaken, tt.lost, tt.rows, tt.seats)
			}
			want := slices.Clone(tt.broken)
			slices.Sort(want)
			if got := failing(r); !slices.Equal(got, want) {
				t.Errorf("failing invariants %q, want %q", got, want)
			}
			// The verdict says what the run means: the guarantee, or the
			// consequence with its diagnosis and the failed invariants.
			s, _ := Lookup(tt.name)
			v := s.Verdict(r)
			switch {
			case v.Held != (len(tt.broken) == 0) || v.Says == "" || len(v.Failed) != len(tt.broken):
				t.Errorf("verdict %+v for %d broken invariants", v, len(tt.broken))
			case tt.variant == Broken && (v.Diagnosis == nil || v.Diagnosis.Cause == "" || v.Diagnosis.Where == "" || v.Diagnosis.Fix == ""):
				t.Errorf("broken run without a whole diagnosis: %+v", v)
			case strings.Contains(v.Says, "bug in learn") || strings.Contains(v.Says, "did not show"):
				t.Errorf("verdict says %q", v.Says)
			}
		})
	}
	for _, s := range Scenarios() {
		for _, v := range []Variant{Correct, Broken} {
			if (v == Correct || s.HasBroken()) && !covered[s.Name+"/"+string(v)] {
				t.Errorf("no expected outcome for %s/%s", s.Name, v)
			}
		}
	}
}

// Each of the runs above decided by a race gives the same outcome every
// time: the interleaving is forced, not left to luck.
func TestForcedRacesRepeat(t *testing.T) {
	for _, tc := range []struct {
		name    string
		variant Variant
	}{{"concurrent-copies", Broken}, {"key-reuse-two-events", Correct}, {"key-reuse-two-events", Broken},
		{"lookup-before-lock", Correct}, {"lookup-before-lock", Broken}, {"request-in-flight", Correct}, {"request-in-flight", Broken}} {
		var first []string
		for i := range 10 {
			r := runScenario(t, tc.name, Options{Variant: tc.variant, Copies: 5})
			got := append(answerCodes(r), fmt.Sprint(r.BookingRows, r.SeatsTaken))
			if i == 0 {
				first = got
			} else if !slices.Equal(got, first) {
				t.Fatalf("%s/%s run %d gave %v, run 1 gave %v", tc.name, tc.variant, i+1, got, first)
			}
		}
	}
}

// Under the lesson's in-flight=wait, the copy that meets the slow one
// queues for the row lock until the engine's bound, is answered 503
// event_busy, and its retry replays; under answer-409 it is answered 409
// request_in_progress at once. The wait is the bound's, never the 409's.
func TestARequestInFlightWaitsOrIsAnswered409(t *testing.T) {
	for _, tc := range []struct {
		design Switches
		codes  []string // the other copy's tries
	}{
		{Switches{}, []string{api.CodeEventBusy, ""}},
		{Switches{InFlight: engine.Answer409}, []string{engine.CodeInProgress, ""}},
	} {
		t.Run(tc.design.String(), func(t *testing.T) {
			r := runScenario(t, "request-in-flight", Options{Design: &tc.design})
			if len(r.Attempts) != 2 {
				t.Fatalf("%d copies", len(r.Attempts))
			}
			// Copy 1 is the slow one, copy 2 the second click that meets it.
			slow, other := r.Attempts[0], r.Attempts[1]
			if slow.Copy != 1 || len(slow.Tries) != 1 || other.Copy != 2 {
				t.Fatalf("copy 1 %+v, copy 2 %+v: want copy 1 booked at its first try", slow, other)
			}
			var codes []string
			for _, tr := range other.Tries {
				codes = append(codes, tr.Code)
			}
			if !slices.Equal(codes, tc.codes) || !other.Tries[len(other.Tries)-1].Replayed {
				t.Errorf("the copy that met the slow one got %+v, want codes %q then a replay", other.Tries, tc.codes)
			}
			if !r.Verdict.Held || r.BookingRows != 1 {
				t.Errorf("verdict %q, %d rows", r.Verdict.Says, r.BookingRows)
			}
		})
	}
}

// Under in-flight=answer-409 the copies do not queue on the row lock: the
// run holds the one that took the key's lock until every other copy has
// met it, and a retry after the 409 is none of the copies the barrier
// waits for. Without both, the number of copies answered 409 (and, with a
// new key per retry, of bookings) was the scheduler's.
func TestInFlight409RacesRepeat(t *testing.T) {
	for _, d := range []Switches{
		{InFlight: engine.Answer409, KeyPerRetry: true},
		{InFlight: engine.Answer409, Store: KeysInMemory, Constraint: engine.NoUnique},
	} {
		for _, name := range []string{"concurrent-copies", "key-reuse-two-events"} {
			var first []string
			for i := range 5 {
				r := runScenario(t, name, Options{Design: &d, Copies: 6})
				got := append(answerCodes(r), fmt.Sprint(r.BookingRows, r.Verdict.Held))
				if i == 0 {
					first = got
				} else if !slices.Equal(got, first) {
					t.Fatalf("%s under %s: run %d gave %v, run 1 gave %v", name, d, i+1, got, first)
				}
			}
		}
	}
}

// Under expiry=24h the sweeper runs while a scenario lets time pass, and
// what it removed is a raw fact of the run: the report gives the swept row
// its key back, marked, so the retry's second booking is seen as the same
// intent's (charged twice), and the two rows are not taken for one key
// holding two bookings (the table holds the key once).
func TestAnExpiredKeyIsStillItsIntents(t *testing.T) {
	r := runScenario(t, "late-retry", Options{Variant: Broken})
	if len(r.Bookings) != 2 || !r.Bookings[0].KeyExpired || r.Bookings[1].KeyExpired || r.Bookings[0].Key != r.Bookings[1].Key {
		t.Fatalf("bookings %+v: want the first with its key back and marked expired, the second with the same key", r.Bookings)
	}
	for _, inv := range r.Invariants {
		if inv.Name == InvOnePerKey && !inv.Pass {
			t.Errorf("%s failed: %s", inv.Name, inv.Detail)
		}
	}
	if got := failing(r); !slices.Contains(got, InvOneBookingPerIntent) {
		t.Errorf("failing %q, want %q among them", got, InvOneBookingPerIntent)
	}
}

// A server's sweeper (learn serve --set expiry=24h) runs on a ticker until
// its context ends, and tells what each run removed.
func TestTheSweeperRunsUntilStopped(t *testing.T) {
	clk := clock.NewFake(time.Date(2030, 5, 1, 18, 0, 0, 0, time.UTC))
	st, err := NewStage(t.Context(), testDatabase(), StageConfig{Clock: clk, KeyExpiry: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}()
	ev, err := st.AddEvent(t.Context(), "Next month", 10, clk.Now().Add(30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	key := uuid.New()
	if _, err := st.Instances[0].API.Engine.BookTicket(t.Context(), engine.Request{UserID: "ada", EventID: ev, Quantity: 1, Key: key}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(25 * time.Hour)
	ctx, stop := context.WithCancel(t.Context())
	told := make(chan []engine.SweptKey)
	done := make(chan struct{})
	go func() {
		defer close(done)
		st.SweepEvery(ctx, time.Millisecond, func(keys []engine.SweptKey, err error) {
			if err != nil {
				t.Error(err)
			}
			select {
			case told <- keys:
			case <-ctx.Done():
			}
		})
	}()
	first := <-told
	if len(first) != 1 || first[0].Key != key.String() {
		t.Errorf("the first sweep removed %+v, want the key %s", first, key)
	}
	if again := <-told; len(again) != 0 {
		t.Errorf("the next sweep removed %+v, want nothing", again)
	}
	stop()
	<-done
	if got := st.Swept(); len(got) != 1 {
		t.Errorf("Swept() = %+v", got)
	}
}

// The retries of retry-storm, on their clients' own clocks: the lesson's
// fixed backoff sends them all in the same 100 ms, a second after the 503s;
// jitter spreads them over the second after that, the same way every run;
// no backoff sends them at once.
func TestTheRetriesSpread(t *testing.T) {
	spread := func(d Switches) Spread {
		r := runScenario(t, "retry-storm", Options{Design: &d})
		return RetrySpread(r)
	}
	if sp := spread(Switches{}); sp.Retries != stormClients || sp.Peak != stormClients || sp.PeakAt != time.Second {
		t.Errorf("fixed backoff: %+v, want all %d at +1.0 s", sp, stormClients)
	}
	jittered := spread(Switches{Backoff: JitterBackoff})
	if jittered.Retries != stormClients || jittered.Peak >= stormClients/2 || jittered.First < time.Second || jittered.Last >= 2*time.Second {
		t.Errorf("jitter: %+v, want %d retries in [1 s, 2 s), fewer than %d in any 100 ms", jittered, stormClients, stormClients/2)
	}
	if again := spread(Switches{Backoff: JitterBackoff}); !slices.Equal(again.Windows, jittered.Windows) {
		t.Errorf("jitter drew %v, then %v", jittered.Windows, again.Windows)
	}
	if sp := spread(Switches{Backoff: NoBackoff}); sp.Peak != stormClients || sp.PeakAt != 0 {
		t.Errorf("no backoff: %+v, want all %d at +0.0 s", sp, stormClients)
	}
}

func TestPrepareRefusesBadOptions(t *testing.T) {
	s, _ := Lookup("concurrent-copies")
	for _, opts := range []Options{{Copies: 1}, {Copies: MaxCopies + 1}} {
		if _, err := s.Prepare(t.Context(), testDatabase(), opts); err == nil {
			t.Errorf("Prepare(%+v) succeeded", opts)
		}
	}
	sellout, _ := Lookup("replay-after-sellout")
	if _, err := sellout.Prepare(t.Context(), testDatabase(), Options{Variant: Broken}); err == nil {
		t.Error("Prepare(broken) of a scenario without a broken variant succeeded")
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup(nope) succeeded")
	}
}

// A gated trace stops on every step until released; the lost-answer run
// goes through the lesson's sequence in order.
func TestGatedTraceStepsThroughTheLostAnswerSequence(t *testing.T) {
	s, _ := Lookup("lost-answer")
	run, err := s.Prepare(t.Context(), testDatabase(), Options{Trace: trace.Options{Stream: true, Gated: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := run.Execute(ctx)
		done <- err
	}()
	var steps []string
	for ev := range run.Trace.Events() {
		if !ev.Kind.IsStep() {
			continue
		}
		label := string(ev.Kind)
		if ev.Lost {
			label += "(lost)"
		}
		if ev.Found {
			label += "(found)"
		}
		steps = append(steps, label)
		// The committed rows seen between steps: the booking is visible
		// from the commit on.
		rows, err := run.Rows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == trace.KindWrite && len(rows.Bookings) != 0 {
			t.Errorf("booking visible before COMMIT: %+v", rows.Bookings)
		}
		if err := run.Trace.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"send", "lock", "lookup", "write", "commit", "answer(lost)", "wait",
		"send", "lock", "lookup(found)", "commit", "answer"}
	if !slices.Equal(steps, want) {
		t.Errorf("steps =\n %v\nwant\n %v", steps, want)
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		25 * time.Hour:   "25 hours",
		time.Hour:        "1 hour",
		90 * time.Minute: "90 minutes",
		time.Minute:      "1 minute",
		3 * time.Second:  "3s",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

// Captions count in words: the event of no-retry-on-4xx has 1 seat, and
// the browser of retries-exhausted gives up after 3 tries.
func TestCaptionsCountInWords(t *testing.T) {
	tests := []struct {
		scenario string
		want     []string // substrings of step captions, each found in some step
	}{
		{"no-retry-on-4xx", []string{"FOR UPDATE (1 seat left)", "2 seats asked, 1 left: 409", "POST /bookings 2 seats, Idempotency-Key"}},
		{"retries-exhausted", []string{"500 from the server after 3 tries: give up", "FOR UPDATE (10 seats left)"}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			s, err := Lookup(tt.scenario)
			if err != nil {
				t.Fatal(err)
			}
			run, err := s.Prepare(t.Context(), testDatabase(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			if _, err := run.Execute(t.Context()); err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, ev := range run.Trace.Recorded() {
				texts = append(texts, ev.Text)
			}
			for _, w := range tt.want {
				if !slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("no caption contains %q; captions:\n%s", w, strings.Join(texts, "\n"))
				}
			}
		})
	}
}

// The forced interleaving of key-reuse-two-events waits for the viewer,
// not for a clock: the test releases a gated run one step at a time and
// holds the second copy's pause step, with the first copy waiting at the
// barrier, until it has looked at the world. Nothing fails, no try is
// retried, and the outcome is the scenario's.
func TestGatedKeyReuseWaitsAsLongAsTheViewerHolds(t *testing.T) {
	tests := []struct {
		variant Variant
		answers []string
		rows    int
		broken  []string
	}{
		{Correct, []string{"200", "409"}, 1, nil},
		{Broken, []string{"200", "200"}, 2, []string{InvOnePerKey}},
	}
	for _, tt := range tests {
		t.Run(string(tt.variant), func(t *testing.T) {
			s, err := Lookup("key-reuse-two-events")
			if err != nil {
				t.Fatal(err)
			}
			run, err := s.Prepare(t.Context(), testDatabase(), Options{Variant: tt.variant, Trace: trace.Options{Stream: true, Gated: true}})
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			barrier := run.Stage.Instances[0].API.Engine.Barrier
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			type result struct {
				rep *Report
				err error
			}
			done := make(chan result, 1)
			go func() {
				rep, err := run.Execute(ctx)
				done <- result{rep, err}
			}()
			pauses, held := 0, false
			for ev := range run.Trace.Events() {
				if !ev.Kind.IsStep() {
					continue
				}
				if ev.Kind == trace.KindPause {
					pauses++
				}
				if (ev.Kind == trace.KindAnswer && ev.Status >= 500) || ev.Kind == trace.KindWait || ev.Kind == trace.KindFail {
					t.Errorf("step %d %s %q: nothing in this run may fail or wait", ev.Seq, ev.Kind, ev.Text)
				}
				if pauses == 2 && !held {
					// One copy waits at the barrier; the other is held at
					// its pause step while the test looks at the world.
					held = true
					if barrier.IsOpen() {
						t.Error("the barrier opened before the second copy was released")
					}
					rows, err := run.Rows(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if len(rows.Bookings) != 0 {
						t.Errorf("a booking is committed while both copies are held: %+v", rows.Bookings)
					}
				}
				if err := run.Trace.Release(ctx); err != nil {
					t.Fatal(err)
				}
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if pauses != 2 || !held {
				t.Errorf("%d pause steps, want 2", pauses)
			}
			if got := answerCodes(r.rep); !slices.Equal(got, tt.answers) {
				t.Errorf("answers %v, want %v", got, tt.answers)
			}
			for _, a := range r.rep.Attempts {
				if len(a.Tries) != 1 {
					t.Errorf("intent %d was tried %d times, want once", a.Intent, len(a.Tries))
				}
			}
			if r.rep.BookingRows != tt.rows || !slices.Equal(failing(r.rep), tt.broken) {
				t.Errorf("rows=%d failing %q, want %d and %q", r.rep.BookingRows, failing(r.rep), tt.rows, tt.broken)
			}
		})
	}
}

// In the lookup-before-lock design the row lock does not decide: both copies
// miss the key, and the constraint settles it (lesson, "How it works" step
// 4). The loser's INSERT fails with 23505 after it took its seats, its
// whole transaction rolls back, seats included, and it reads the winner.
func TestConstraintSettlesWhatTheLockMissed(t *testing.T) {
	s, err := Lookup("lookup-before-lock")
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.Prepare(t.Context(), testDatabase(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	rep, err := run.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var misses, writes, violations, winners int
	for _, ev := range run.Trace.Recorded() {
		switch {
		case ev.Kind == trace.KindLookup && !ev.Found:
			misses++
		case ev.Kind == trace.KindWrite:
			writes++
		case ev.Kind == trace.KindRollback && strings.Contains(ev.Label, "23505") && strings.Contains(ev.Text, "seats included"):
			violations++
		case ev.Kind == trace.KindLookup && ev.Found && strings.HasPrefix(ev.Label, "read winner"):
			winners++
		}
	}
	// The winner's write is a step; the loser's INSERT fails, so its step is
	// the rollback of everything it did, seats included.
	if misses != 2 || writes != 1 || violations != 1 || winners != 1 {
		t.Errorf("lookups that missed %d, writes %d, 23505s %d, winners read %d; want 2, 1, 1, 1", misses, writes, violations, winners)
	}
	if rep.BookingRows != 1 || rep.SeatsTaken != 2 || !rep.Passed() {
		t.Errorf("report %+v", rep)
	}
}

// The trace tells things in the database's order: the loser of a unique
// violation (23505) is told after the winner's COMMIT, in every run, though
// the two requests race for the trace once the database has decided.
func TestTheLoserIsToldAfterTheWinnersCommit(t *testing.T) {
	for _, name := range []string{"key-reuse-two-events", "lookup-before-lock"} {
		s, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 15 {
			run, err := s.Prepare(t.Context(), testDatabase(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The winner is slow to report its COMMIT, as on a busy
			// machine: the loser's 23505 comes back meanwhile, and the
			// loser has rolled back, before the winner tells it.
			answered := loserAnswered(t)
			for _, in := range run.Stage.Instances {
				in.API.Engine.OnCommit = answered
			}
			if _, err := run.Execute(t.Context()); err != nil {
				t.Fatal(err)
			}
			commit, violation := 0, 0
			for _, ev := range run.Trace.Recorded() {
				switch {
				case ev.Kind == trace.KindCommit && !ev.Replayed:
					commit = ev.Seq
				case ev.Kind == trace.KindRollback && strings.Contains(ev.Label, "23505"):
					violation = ev.Seq
				}
			}
			if commit == 0 || violation == 0 || violation < commit {
				t.Fatalf("%s run %d: the winner's COMMIT is event %d, the loser's 23505 event %d", name, i+1, commit, violation)
			}
			if err := run.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// loserAnswered is an OnCommit that returns once no session of testDB's
// database waits for a lock or sits in an aborted transaction, asked of
// PostgreSQL on a connection of its own: once the winner has committed,
// the loser's INSERT gets its 23505, and the loser rolls back. Each
// question is a round trip to PostgreSQL; nothing else says when another
// session's transaction has ended.
func loserAnswered(t *testing.T) func() {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testDB.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	var mu sync.Mutex
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for {
			var waiting int
			err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()
				AND (wait_event_type = 'Lock' OR state = 'idle in transaction (aborted)')`).Scan(&waiting)
			if err != nil || waiting == 0 {
				return // an error leaves the order to the run, and the check below says what came of it
			}
		}
	}
}

// Connections is what the run's pools may hold at once, counted from the
// pools a prepared run really has: a workshop budgets with it, so it must
// not count fewer than the stage opens.
func TestConnectionsCountsEveryPoolOfTheStage(t *testing.T) {
	type tc struct {
		name string
		opts Options
	}
	var cases []tc
	for _, s := range Scenarios() {
		cases = append(cases, tc{s.Name, Options{}})
		if s.HasBroken() {
			cases = append(cases, tc{s.Name, Options{Variant: Broken}})
		}
	}
	cases = append(cases, tc{"concurrent-copies", Options{Copies: MinCopies}}, tc{"concurrent-copies", Options{Copies: MaxCopies}},
		tc{"other-instance", Options{Design: &Switches{Store: KeysInRedis}}}) // the design lab's
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/%d", c.name, c.opts.Variant, c.opts.Copies), func(t *testing.T) {
			s, err := Lookup(c.name)
			if err != nil {
				t.Fatal(err)
			}
			run, err := s.Prepare(t.Context(), testDatabase(), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = run.Close() }()
			held := int(run.Stage.Admin.Config().MaxConns)
			for _, p := range run.Stage.pools {
				held += int(p.Config().MaxConns)
			}
			if got := s.Connections(c.opts); got != held {
				t.Errorf("Connections = %d, the stage's pools hold up to %d", got, held)
			}
		})
	}
}
