package quiz

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/progress"
	"pgregory.net/rapid"
)

const day = 24 * time.Hour

// fixedNow is the clock of the tests that need a fixed time.
var fixedNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// TestScheduleIntervals follows known sequences of ratings through
// Schedule: the interval in days and the ease after each.
func TestScheduleIntervals(t *testing.T) {
	type step struct {
		g        Rating
		interval float64
		ease     float64
		reps     int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"new good", []step{{Good, 1, 2.5, 1}}},
		{"new hard", []step{{Hard, 1, 2.35, 1}}},
		{"new easy", []step{{Easy, 4, 2.65, 1}}},
		{"new again", []step{{Again, 0, 2.3, 0}}},
		{"good good good", []step{{Good, 1, 2.5, 1}, {Good, 2.5, 2.5, 2}, {Good, 6.25, 2.5, 3}}},
		{"good good hard", []step{{Good, 1, 2.5, 1}, {Good, 2.5, 2.5, 2}, {Hard, 3, 2.35, 3}}},
		{"good good easy", []step{{Good, 1, 2.5, 1}, {Good, 2.5, 2.5, 2}, {Easy, 8.125, 2.65, 3}}},
		{"easy then good", []step{{Easy, 4, 2.65, 1}, {Good, 10.6, 2.65, 2}}},
		{"lapse and relearn", []step{{Good, 1, 2.5, 1}, {Good, 2.5, 2.5, 2}, {Again, 0, 2.3, 0}, {Good, 1, 2.3, 1}, {Good, 2.3, 2.3, 2}}},
		{"ease floor", []step{{Again, 0, 2.3, 0}, {Again, 0, 2.1, 0}, {Again, 0, 1.9, 0}, {Again, 0, 1.7, 0}, {Again, 0, 1.5, 0}, {Again, 0, 1.3, 0}, {Again, 0, 1.3, 0}}},
		{"ease ceiling", []step{{Easy, 4, 2.65, 1}, {Easy, 13.78, 2.8, 2}, {Easy, 50.1592, 2.95, 3}, {Easy, 192.3605, 3.0, 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := fixedNow
			var r progress.Review
			for i, s := range tt.steps {
				r = Schedule(r, s.g, now)
				if math.Abs(r.IntervalDays-s.interval) > 0.01 || math.Abs(r.Ease-s.ease) > 1e-9 || r.Reps != s.reps {
					t.Fatalf("step %d (%s): interval %.4f ease %.2f reps %d, want %.4f %.2f %d",
						i+1, s.g, r.IntervalDays, r.Ease, r.Reps, s.interval, s.ease, s.reps)
				}
				wantDue := now.Add(time.Duration(r.IntervalDays * float64(day)))
				if s.g == Again {
					wantDue = now.Add(AgainDelay)
				}
				if !r.Due.Equal(wantDue) {
					t.Fatalf("step %d: due %v, want %v", i+1, r.Due, wantDue)
				}
				now = r.Due
			}
		})
	}
}

func TestScheduleCapsInterval(t *testing.T) {
	r := Schedule(progress.Review{IntervalDays: 300, Ease: 2.5, Reps: 5}, Easy, fixedNow)
	if r.IntervalDays != MaxIntervalDays || !r.Due.Equal(fixedNow.Add(MaxIntervalDays*day)) {
		t.Errorf("got %+v", r)
	}
}

func TestScheduleInvalidRatingIsAgain(t *testing.T) {
	r := progress.Review{IntervalDays: 10, Ease: 2.5, Reps: 3}
	if got, want := Schedule(r, Rating(0), fixedNow), Schedule(r, Again, fixedNow); got != want {
		t.Errorf("Rating(0) gives %+v, Again %+v", got, want)
	}
}

// TestScheduleProperties checks the rules of Schedule on any review, rating
// and time: due never before now, ease bounded, Again resets, a better
// rating never gives a shorter interval, and a remembered card's interval
// does not shrink.
func TestScheduleProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := progress.Review{
			Due:          time.Unix(rapid.Int64Range(0, 4e9).Draw(t, "due"), 0),
			IntervalDays: rapid.Float64Range(-5, 400).Draw(t, "interval"),
			Ease:         rapid.Float64Range(-1, 5).Draw(t, "ease"),
			Reps:         rapid.IntRange(-1, 50).Draw(t, "reps"),
			Lapses:       rapid.IntRange(0, 50).Draw(t, "lapses"),
		}
		now := time.Unix(rapid.Int64Range(0, 4e9).Draw(t, "now"), rapid.Int64Range(0, 999999999).Draw(t, "nanos"))
		g := rapid.SampledFrom([]Rating{Again, Hard, Good, Easy}).Draw(t, "rating")

		next := Schedule(r, g, now)
		if next.Due.Before(now) {
			t.Fatalf("due %v before now %v", next.Due, now)
		}
		if next.Ease < MinEase || next.Ease > MaxEase || math.IsNaN(next.Ease) {
			t.Fatalf("ease %v out of [%v, %v]", next.Ease, MinEase, MaxEase)
		}
		if next.Lapses < r.Lapses {
			t.Fatalf("lapses went down: %d → %d", r.Lapses, next.Lapses)
		}
		if g == Again {
			if next.Reps != 0 || next.IntervalDays != 0 || next.Lapses != r.Lapses+1 || !next.Due.Equal(now.Add(AgainDelay)) {
				t.Fatalf("Again did not reset: %+v", next)
			}
			return
		}
		if next.IntervalDays < 1 || next.IntervalDays > MaxIntervalDays {
			t.Fatalf("interval %v out of [1, %d]", next.IntervalDays, MaxIntervalDays)
		}
		if next.Reps != max(r.Reps, 0)+1 || next.Lapses != r.Lapses {
			t.Fatalf("reps %d lapses %d after %+v", next.Reps, next.Lapses, r)
		}
		if r.Reps > 0 && r.IntervalDays >= 1 && next.IntervalDays < math.Min(r.IntervalDays, MaxIntervalDays) {
			t.Fatalf("a remembered card's interval shrank: %v → %v", r.IntervalDays, next.IntervalDays)
		}
		hard, good, easy := Schedule(r, Hard, now), Schedule(r, Good, now), Schedule(r, Easy, now)
		if hard.IntervalDays > good.IntervalDays || good.IntervalDays > easy.IntervalDays {
			t.Fatalf("intervals hard %v good %v easy %v are not in order", hard.IntervalDays, good.IntervalDays, easy.IntervalDays)
		}
	})
}

func TestDue(t *testing.T) {
	cards := []Card{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}}
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	p := progress.NewProgress()
	p.Drill["a"] = progress.Review{Due: now.Add(time.Hour), IntervalDays: 1, Reps: 1}     // later today
	p.Drill["b"] = progress.Review{Due: now.Add(-2 * day), IntervalDays: 3, Reps: 2}      // overdue
	p.Drill["d"] = progress.Review{Due: now, IntervalDays: 1, Reps: 1}                    // due right now
	p.Drill["e"] = progress.Review{Due: now.Add(3 * day), IntervalDays: 4, Reps: 1}       // later
	p.Drill["gone"] = progress.Review{Due: now.Add(-time.Hour), IntervalDays: 1, Reps: 1} // a card no longer in the deck
	ids := func(cs []Card) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	if got, want := ids(Due(p, cards, now)), []string{"b", "d", "c"}; !slices.Equal(got, want) {
		t.Errorf("Due = %v, want %v (overdue first, then new)", got, want)
	}
	if got := DueToday(p, cards, now); got != 4 {
		t.Errorf("DueToday = %d, want 4 (a, b, c, d)", got)
	}
	if got := ids(Due(nil, cards, now)); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("Due(nil) = %v: every card is new", got)
	}
	if got := Due(p, nil, now); len(got) != 0 {
		t.Errorf("Due of no cards = %v", got)
	}
	// Rating a due card Good takes it out of today's count.
	Rate(p, "c", Good, now)
	if got := DueToday(p, cards, now); got != 3 {
		t.Errorf("after rating c: DueToday = %d, want 3", got)
	}
	// Again brings it back within the day.
	Rate(p, "b", Again, now)
	if got := ids(Due(p, cards, now.Add(AgainDelay))); !slices.Contains(got, "b") {
		t.Errorf("a card rated Again is not due %v later: %v", AgainDelay, got)
	}
}
