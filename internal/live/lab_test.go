package live

import (
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
)

// The lesson's design is safe against every scenario.
func TestTheLessonsDesignPassesEveryScenario(t *testing.T) {
	rs := newRuns(t)
	card := rs.Lab(t.Context(), sim.Switches{}, nil)
	if card.Safe != len(sim.Scenarios()) || card.Total != card.Safe {
		for _, r := range card.Scenarios {
			if !r.Pass {
				t.Errorf("%s: %s %v %s", r.Scenario, r.Consequence, r.Failed, r.Error)
			}
		}
	}
	for _, r := range card.Scenarios {
		namesOnlyGuardsThatActed(t, "the lesson's design", r)
	}
	if card.Summary != "safe against 19 of 19 scenarios" {
		t.Errorf("summary %q", card.Summary)
	}
}

// namesOnlyGuardsThatActed fails t when the ✓ sentence of a scenario that
// held names a guard that did not act in its run (say, 23505 when no
// unique violation happened), or, for a scenario whose repeat some guard
// must stop, names none.
func namesOnlyGuardsThatActed(t *testing.T, design string, r sim.LabResult) {
	t.Helper()
	if !r.Pass {
		return
	}
	g := r.Guards
	for _, c := range []struct {
		words string
		acted bool
	}{
		{"23505", g.Violations > 0},
		{"constraint", g.Violations > 0},
		{"lookup", g.Lookups > 0},
		{"booking row", g.Lookups > 0},
		{"key store", g.StoreHits > 0},
		{"memory", g.StoreHits > 0},
		{"Redis", g.RedisHits > 0},
	} {
		if strings.Contains(r.Consequence, c.words) && !c.acted {
			t.Errorf("under %s, %s says %q, but no %q acted in its run (%+v)", design, r.Scenario, r.Consequence, c.words, g)
		}
	}
	if r.Scenario == "lookup-before-lock" || r.Scenario == "key-reuse-two-events" {
		if g.Lookups+g.Violations+g.StoreHits == 0 {
			t.Errorf("under %s, %s held but no guard acted: %+v", design, r.Scenario, g)
		} else if !strings.ContainsAny(r.Consequence, ";:") || !(strings.Contains(r.Consequence, "lookup") || strings.Contains(r.Consequence, "23505") || strings.Contains(r.Consequence, "key store")) {
			t.Errorf("under %s, %s says %q without naming the guard that acted (%+v)", design, r.Scenario, r.Consequence, g)
		}
	}
}

// Each broken variant the scenarios have is a design of the lab, and the
// lab's scorecard for that design agrees with the scenario's own verdict:
// the same invariants fail, with the same words.
func TestTheLabAgreesWithEveryBrokenVariant(t *testing.T) {
	t.Parallel() // runs of its own, on schemas of their own
	rs := newRuns(t)
	for _, s := range sim.Scenarios() {
		if !s.HasBroken() {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			design := s.Design(sim.Broken)
			own := rs.Start(s, sim.Options{Variant: sim.Broken})
			<-own.Done()
			rep, err := own.Result()
			if err != nil {
				t.Fatal(err)
			}
			want := sim.ResultOf(s, rep)
			card := rs.Lab(t.Context(), design, nil)
			got, ok := card.Of(s.Name)
			if !ok || got.Pass != want.Pass || got.Consequence != want.Consequence || !slices.Equal(got.Failed, want.Failed) {
				t.Errorf("under %s the lab says %+v, the scenario's broken variant %+v", design, got, want)
			}
		})
	}
}

// The scorecard of every single-switch deviation from the lesson's design:
// which scenarios catch it, and why.
func TestEverySingleSwitchDeviation(t *testing.T) {
	t.Parallel() // runs of its own, on schemas of their own
	rs := newRuns(t)
	tests := []struct {
		sw, value string
		caught    []string // scenarios that fail, in scenario order
		why       string
	}{
		{"lookup", "before-lock", nil, "two copies both miss the key, and the constraint settles it"},
		{"lookup", "after-seat-check", []string{"last-seats", "replay-after-sellout"}, "a retry meets the seat check first and is refused for seats it has"},
		{"lookup", "none", []string{"last-seats", "replay-after-sellout"}, "the constraint catches repeats, but only after the seat check"},
		{"lock", "none", nil, "copies run side by side, and the constraint settles them"},
		{"constraint", "key", []string{"two-users-same-key"}, "another user's key blocks the booking"},
		{"constraint", "none", []string{"key-reuse-two-events"}, "two event rows, two locks: only the constraint sees the shared key"},
		{"compare", "event-quantity", nil, "the lookup is by user and key, so the booking found is always the user's: leaving the user out of the comparison changes nothing on its own"},
		{"compare", "none", []string{"different-quantity", "key-reuse-two-events"}, "any booking with the key is replayed, whatever was asked"},
		{"store", "memory", nil, "api-2 has never seen the key, but the row's constraint stops its INSERT (23505) and it answers with the first booking"},
		{"store", "redis-ttl", nil, "the crash between the writes and the expired key both miss Redis, and the row's constraint stops both INSERTs (23505)"},
		{"expiry", "24h", []string{"redis-ttl", "late-retry"}, "the keys leave their rows after a day: the crash between two writes is still caught by the row, but a retry 25 hours late books again"},
		{"isolation", "repeatable-read", nil, "the copies that waited for the row lock fail with 40001, and the engine runs their transaction again: they replay"},
		{"isolation", "serializable", nil, "as at REPEATABLE READ: each 40001 is run again in a new snapshot, which sees the booking"},
		{"on-40001", "answer-503", nil, "at READ COMMITTED PostgreSQL raises no 40001: the switch acts on nothing"},
		{"on-40001", "answer-500", nil, "at READ COMMITTED PostgreSQL raises no 40001: the switch acts on nothing"},
		{"in-flight", "answer-409", nil, "a copy of a key still being booked is answered 409 request_in_progress at once, and the client's retry, by the code, replays"},
		{"client-key", "per-retry", []string{"lost-answer", "last-seats", "new-key-per-retry", "replay-after-sellout", "other-instance", "redis-ttl", "page-reload", "request-in-flight", "late-retry"}, "every retry after a lost answer is a new booking"},
		{"key-kept", "memory", []string{"page-reload"}, "the reload loses the key, and the retry from the page drawn again is a new booking"},
		{"retry", "status-only", nil, "under the lesson's in-flight=wait no 409 asks for a retry: the switch acts on nothing"},
		{"retry", "also-4xx", []string{"different-quantity", "key-reuse-two-events", "no-retry-on-4xx"}, "a final 409 is sent again"},
		{"retry", "none", []string{"lost-answer", "last-seats", "new-key-per-retry", "replay-after-sellout", "retries-exhausted", "crash-before-commit", "other-instance", "redis-ttl", "page-reload", "request-in-flight", "late-retry", "retry-storm"}, "a lost answer, or a 500, is never tried again, so the user never learns of the booking"},
		{"backoff", "jitter", nil, "each wait gains a random part: the retries spread, and none comes before its backoff"},
		{"backoff", "none", []string{"lost-answer", "last-seats", "new-key-per-retry", "replay-after-sellout", "retries-exhausted", "crash-before-commit", "other-instance", "redis-ttl", "page-reload", "request-in-flight", "late-retry", "retry-storm"}, "every retry goes at once"},
	}
	tried := map[string]bool{}
	for _, tt := range tests {
		tried[tt.sw+"="+tt.value] = true
		t.Run(tt.sw+"="+tt.value, func(t *testing.T) {
			d, err := sim.Switches{}.With(tt.sw, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			card := rs.Lab(t.Context(), d, nil)
			var caught []string
			for _, r := range card.Scenarios {
				if r.Error != "" {
					t.Errorf("%s could not run: %s", r.Scenario, r.Error)
				}
				namesOnlyGuardsThatActed(t, d.String(), r)
				if !r.Pass {
					caught = append(caught, r.Scenario)
					if r.Consequence == "" || len(r.Failed) == 0 {
						t.Errorf("%s fails without saying how: %+v", r.Scenario, r)
					}
				}
			}
			if !slices.Equal(caught, tt.caught) {
				t.Errorf("caught by %q, want %q (%s)", caught, tt.caught, tt.why)
			}
			if want := len(sim.Scenarios()) - len(tt.caught); card.Safe != want {
				t.Errorf("safe against %d, want %d", card.Safe, want)
			}
		})
	}
	for _, sw := range sim.LabSwitches() {
		for _, v := range sw.Values[1:] {
			if !tried[sw.Name+"="+v] {
				t.Errorf("no row for %s=%s", sw.Name, v)
			}
		}
	}
}

// BenchmarkLabScorecard times the whole scorecard of the lesson's design:
// every scenario, each on a stage of its own, all at once, on this
// package's PostgreSQL (the target is 3 s on a 2-core machine).
//
//	go test -run '^$' -bench LabScorecard -benchtime 5x ./internal/live/
func BenchmarkLabScorecard(b *testing.B) {
	rs := NewRuns(b.Context(), Existing(testDB))
	defer rs.Close()
	for b.Loop() {
		if card := rs.Lab(b.Context(), sim.Switches{}, nil); card.Safe != len(sim.Scenarios()) {
			b.Fatalf("the lesson's design: %s", card.Summary)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/scorecard")
}
