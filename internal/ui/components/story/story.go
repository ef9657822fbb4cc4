// Package story compresses the trace of a run into the shape of the
// lesson's sequence diagram ("Picture it"): two lanes, the browser and the
// API with its PostgreSQL, and for each try three lines: the request, what
// the engine did with it in one note, and the answer (or its loss). Waits
// fold into the retry they precede; the world's notes (another user books,
// time passes) stay. Copies that met the same fate are told once, with
// their count and the range of booking ids. The play screen shows it as the
// last frame of a run: the whole story at 80x24.
package story

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/internal/ui/components/seqdiag"
	"github.com/learn-idempotency/learn/sim/trace"
)

// The story's two lanes.
const (
	Browser = "browser"
	Server  = "server"
)

// Lanes are the story's lanes: the browser, and the API with PostgreSQL.
func Lanes() []seqdiag.Lane {
	return []seqdiag.Lane{{ID: Browser, Name: "Browser"}, {ID: Server, Name: "API + Postgres"}}
}

// attempt is one try of one intent (or copy), as the story tells it.
type attempt struct {
	intent, copy, try int
	send              string
	did               []string // what the engine did, in order
	answer            string   // "" when no answer came back
	lost              bool
	ids               []string // booking ids in the labels, for grouping
	end               int      // Seq of its last event
	decided           int      // Seq of its COMMIT, ROLLBACK or crash: tries are told in the order the database decided them
}

// line is one line of the story before grouping: an attempt, or a note of
// the world.
type line struct {
	a    *attempt
	note string
	seq  int // a note's Seq
}

func (l line) at() int {
	switch {
	case l.a == nil:
		return l.seq
	case l.a.decided > 0:
		return l.a.decided
	}
	return l.a.end
}

// Tell compresses events (a run's whole trace) into the story's arrows, in
// the order things happened.
func Tell(events []trace.Event) []seqdiag.Arrow {
	var lines []line
	byTry := map[[3]int]*attempt{}
	wait := ""
	instances := map[string]bool{}
	eventOf := map[int]int64{} // intent → the event it books
	events2 := map[int64]bool{}
	for _, ev := range events {
		if strings.HasPrefix(ev.From, "api-") {
			instances[ev.From] = true
		}
		if ev.Kind == trace.KindSend && ev.EventID != 0 {
			eventOf[ev.Intent] = ev.EventID
			events2[ev.EventID] = true
		}
	}
	for i, ev := range events {
		k := [3]int{ev.Intent, ev.Copy, ev.Try}
		a := byTry[k]
		if a != nil && ev.Kind != trace.KindSQL && ev.Kind != trace.KindLog {
			a.end = ev.Seq
		}
		switch ev.Kind {
		case trace.KindSend:
			a = &attempt{intent: ev.Intent, copy: ev.Copy, try: ev.Try, send: ev.Label, end: ev.Seq}
			if ev.Try > 1 {
				a.send = "retry" + wait + ": " + strings.TrimPrefix(afterColon(ev.Label), " ")
			}
			if len(instances) > 1 {
				a.send += " → " + ev.To
			}
			if len(events2) > 1 {
				a.send = fmt.Sprintf("event %d: %s", eventOf[ev.Intent], a.send)
			}
			wait = ""
			byTry[k] = a
			lines = append(lines, line{a: a})
		case trace.KindWait:
			wait = " after " + ev.Delay.String()
		case trace.KindLock, trace.KindLookup, trace.KindWrite, trace.KindCommit, trace.KindRollback, trace.KindCrash, trace.KindKeyStore:
			if a != nil {
				if ev.Kind == trace.KindCommit || ev.Kind == trace.KindRollback || ev.Kind == trace.KindCrash {
					a.decided = ev.Seq
				}
				a.did = append(a.did, short(ev))
				if ev.BookingID != "" {
					a.ids = append(a.ids, ev.BookingID)
				}
			}
		case trace.KindAnswer:
			if a != nil {
				a.answer, a.lost = ev.Text, ev.Lost
				if ev.Lost {
					a.answer, _, _ = strings.Cut(ev.Text, " — lost on the way back")
					a.answer += " (lost)"
				}
			}
		case trace.KindFail, trace.KindGiveUp:
			if a != nil && a.answer == "" {
				a.answer, a.lost = ev.Label, true
			}
			if ev.Kind == trace.KindGiveUp {
				lines = append(lines, line{note: ev.Label, seq: ev.Seq})
			}
		case trace.KindNote:
			note := ev.Label
			if ClockJump(events, i) > 0 {
				note += SimulatedClock
			}
			lines = append(lines, line{note: note, seq: ev.Seq})
		}
	}
	slices.SortStableFunc(lines, func(a, b line) int { return a.at() - b.at() })
	return arrows(groupLines(lines))
}

// SimulatedClock labels a note at which the run's simulated clock jumped
// ahead ("25 hours pass (simulated clock)"): learn moves the clock, no one
// waits.
const SimulatedClock = " (simulated clock)"

// ClockJump is how far the run's simulated clock jumped ahead at
// events[i], a note of the world that lets time pass ("25 hours pass"); 0
// for any other event. A run's clock moves only when the browser backs off
// (each wait says its Delay before it sleeps) and when the scenario lets
// time pass; the jump is the time the waits so far do not account for:
// events[i].At minus the latest At (plus Delay, for a wait) before it.
func ClockJump(events []trace.Event, i int) time.Duration {
	if i <= 0 || i >= len(events) || events[i].Kind != trace.KindNote {
		return 0
	}
	var accounted time.Duration
	for _, ev := range events[:i] {
		end := ev.At
		if ev.Kind == trace.KindWait {
			end += ev.Delay
		}
		accounted = max(accounted, end)
	}
	return max(0, events[i].At-accounted)
}

// afterColon is a send label without its "ada: " or "ada retries: ".
func afterColon(label string) string {
	if _, rest, ok := strings.Cut(label, ":"); ok {
		return rest
	}
	return label
}

// short is an engine step in a few words, for the one note of a try.
func short(ev trace.Event) string {
	switch ev.Kind {
	case trace.KindLock:
		return "" // every try locks: not worth a word in the story
	case trace.KindLookup:
		if ev.Found {
			return "key has " + ev.BookingID
		}
		return ""
	case trace.KindWrite:
		return "booked " + ev.BookingID
	case trace.KindCommit:
		if ev.Replayed {
			return "write nothing"
		}
		return "COMMIT"
	}
	return ev.Label
}

// group tells once the tries of copies that met the same fate: equal but
// for the copy number and the booking ids.
type group struct {
	line
	count int
	ids   []string
}

func groupLines(lines []line) []group {
	var out []group
	for _, l := range lines {
		if l.a != nil && l.a.copy > 0 {
			sig := signature(l.a)
			i := slices.IndexFunc(out, func(g group) bool { return g.a != nil && g.a.copy > 0 && signature(g.a) == sig })
			if i >= 0 {
				out[i].count++
				out[i].ids = append(out[i].ids, l.a.ids...)
				continue
			}
		}
		out = append(out, group{line: l, count: 1, ids: slices.Clone(idsOf(l))})
	}
	return out
}

func idsOf(l line) []string {
	if l.a == nil {
		return nil
	}
	return l.a.ids
}

// bookingID matches a booking id as a whole word: "b7", not the "b7" of a
// key's hex digits.
var bookingID = regexp.MustCompile(`\bb[0-9]+\b`)

// signature is an attempt's lines with booking ids and copy numbers left
// out.
func signature(a *attempt) string {
	return strings.Join([]string{a.send, bookingID.ReplaceAllString(strings.Join(a.did, ","), "b?"),
		bookingID.ReplaceAllString(a.answer, "b?"), fmt.Sprint(a.lost, a.try)}, "|")
}

// arrows draws the groups.
func arrows(groups []group) []seqdiag.Arrow {
	var out []seqdiag.Arrow
	for _, g := range groups {
		if g.a == nil {
			out = append(out, seqdiag.Arrow{From: Browser, To: Browser, Label: g.note})
			continue
		}
		a := g.a
		who := ""
		if a.copy > 0 {
			who = fmt.Sprintf("copy %d: ", a.copy)
			if g.count > 1 {
				who = fmt.Sprintf("%d copies: ", g.count)
			}
		}
		ids := distinct(g.ids)
		slices.SortFunc(ids, func(a, b string) int { // b2 before b10
			if len(a) != len(b) {
				return len(a) - len(b)
			}
			return strings.Compare(a, b)
		})
		did := compact(a.did)
		answer := a.answer
		if len(ids) > 1 {
			span := ids[0] + "–" + ids[len(ids)-1]
			did = bookingID.ReplaceAllString(did, span)
			answer = bookingID.ReplaceAllString(answer, span)
		}
		if g.count > 1 && answer != "" {
			answer = fmt.Sprintf("%d × %s", g.count, answer)
		}
		out = append(out, seqdiag.Arrow{From: Browser, To: Server, Label: who + strings.TrimSpace(a.send)})
		if did != "" {
			out = append(out, seqdiag.Arrow{From: Server, To: Server, Label: did})
		}
		if answer != "" {
			out = append(out, seqdiag.Arrow{From: Server, To: Browser, Label: answer, Dashed: true, Lost: a.lost})
		}
	}
	return out
}

// compact joins the engine's steps of one try: "booked b1, COMMIT".
func compact(did []string) string {
	var parts []string
	for _, d := range did {
		if d != "" && !slices.Contains(parts, d) {
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, ", ")
}

// distinct keeps the first of each id, in order.
func distinct(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
