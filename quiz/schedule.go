package quiz

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/learn-idempotency/learn/progress"
)

// Rating is how well the learner recalled a card's answer.
type Rating int

// The ratings, worst to best. The zero Rating is not one of them.
const (
	Again Rating = iota + 1 // not recalled: show it again in a few minutes
	Hard                    // recalled with difficulty
	Good                    // recalled
	Easy                    // recalled at once
)

// String returns "again", "hard", "good" or "easy".
func (g Rating) String() string {
	switch g {
	case Again:
		return "again"
	case Hard:
		return "hard"
	case Good:
		return "good"
	case Easy:
		return "easy"
	}
	return fmt.Sprintf("Rating(%d)", int(g))
}

// The parameters of [Schedule].
const (
	DefaultEase     = 2.5
	MinEase         = 1.3
	MaxEase         = 3.0
	MaxIntervalDays = 365
	// AgainDelay is when a card rated Again comes back: within the same
	// sitting.
	AgainDelay = 10 * time.Minute
)

// Schedule returns the review (a card's schedule, as progress saves it)
// after rating a card g at now. The rule is
// SM-2 style, on a whole-day scale:
//
//   - Again: Reps back to 0, Lapses + 1, IntervalDays 0, Ease − 0.20, due
//     AgainDelay after now.
//   - For a card with Reps 0 (new, or after Again): Hard and Good give 1
//     day, Easy 4 days.
//   - Otherwise, with I the last interval and E the ease before the rating:
//     Hard gives max(1, 1.2·I); Good max(Hard, E·I); Easy max(Good + 1,
//     1.3·Good).
//   - Ease changes by −0.15 on Hard, 0 on Good, +0.15 on Easy.
//   - Ease stays within MinEase..MaxEase and intervals at most
//     MaxIntervalDays; Hard, Good and Easy add 1 to Reps; the card is due
//     the interval after now.
//
// So Due is never before now, and for one review Hard ≤ Good ≤ Easy. A
// Rating outside Again..Easy counts as Again. A review with a negative or
// non-finite interval or ease is treated as new in that field.
func Schedule(r progress.Review, g Rating, now time.Time) progress.Review {
	ease := r.Ease
	if ease == 0 || math.IsNaN(ease) || math.IsInf(ease, 0) {
		ease = DefaultEase
	}
	ease = clampEase(ease)
	prev := r.IntervalDays
	if prev < 0 || math.IsNaN(prev) || math.IsInf(prev, 0) {
		prev = 0
	}
	reps := max(r.Reps, 0)
	out := progress.Review{Reps: reps + 1, Lapses: max(r.Lapses, 0)}
	var days float64
	switch {
	case reps == 0 && (g == Hard || g == Good):
		days = 1
	case reps == 0 && g == Easy:
		days = 4
	case g == Hard || g == Good || g == Easy:
		hard := math.Max(1, 1.2*prev)
		good := math.Max(hard, ease*prev)
		easy := math.Max(good+1, 1.3*good)
		days = map[Rating]float64{Hard: hard, Good: good, Easy: easy}[g]
	default: // Again, or not a rating
		out.Reps, out.Lapses = 0, out.Lapses+1
		out.Ease = clampEase(ease - 0.20)
		out.Due = now.Add(AgainDelay)
		return out
	}
	switch g {
	case Hard:
		ease -= 0.15
	case Easy:
		ease += 0.15
	}
	out.Ease = clampEase(ease)
	out.IntervalDays = math.Min(days, MaxIntervalDays)
	out.Due = now.Add(time.Duration(out.IntervalDays * float64(24*time.Hour)))
	return out
}

func clampEase(e float64) float64 { return math.Min(math.Max(e, MinEase), MaxEase) }

// Rate applies the learner's rating g of card cardID at now ([Schedule])
// to p.Drill and returns the card's new schedule.
func Rate(p *progress.Progress, cardID string, g Rating, now time.Time) progress.Review {
	if p.Drill == nil {
		p.Drill = map[string]progress.Review{}
	}
	r := Schedule(p.Drill[cardID], g, now)
	p.Drill[cardID] = r
	return r
}

// Due returns the cards of cards due at now: those without a review in
// p.Drill (new cards count as due) and those whose review is due at or
// before now. Reviewed cards come first, the longest overdue first, then
// new cards in deck order. A nil p makes every card new.
func Due(p *progress.Progress, cards []Card, now time.Time) []Card {
	return dueBy(p, cards, now)
}

// DueToday counts the cards due before the end of now's day (midnight in
// now's location), new cards included: the number the home screen shows.
func DueToday(p *progress.Progress, cards []Card, now time.Time) int {
	y, m, d := now.Date()
	endOfDay := time.Date(y, m, d+1, 0, 0, 0, 0, now.Location()).Add(-time.Nanosecond)
	return len(dueBy(p, cards, endOfDay))
}

func dueBy(p *progress.Progress, cards []Card, t time.Time) []Card {
	type reviewed struct {
		c   Card
		due time.Time
	}
	var old []reviewed
	var fresh []Card
	for _, c := range cards {
		r, ok := progress.Review{}, false
		if p != nil {
			r, ok = p.Drill[c.ID]
		}
		switch {
		case !ok:
			fresh = append(fresh, c)
		case !r.Due.After(t):
			old = append(old, reviewed{c, r.Due})
		}
	}
	slices.SortStableFunc(old, func(a, b reviewed) int { return a.due.Compare(b.due) })
	out := make([]Card, 0, len(old)+len(fresh))
	for _, o := range old {
		out = append(out, o.c)
	}
	return append(out, fresh...)
}
