package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize/english"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// Diagnosis is a mistake of design in the source page's "Break it" columns: what
// a user or an operator sees, what causes it, where to look in this project
// (file → function), and the fix.
type Diagnosis struct {
	Symptom string `json:"symptom"`
	Cause   string `json:"cause"`
	Where   string `json:"where"`
	Fix     string `json:"fix"`
}

// Verdict is what a run means, read in one second: whether the guarantee
// held, in the user's terms, and for a broken design which invariants failed
// and the fault behind it. learn demo, the play screen, the race and the
// Break-it quiz all read it from here, so they never disagree.
type Verdict struct {
	// Held is true when every invariant held.
	Held bool `json:"held"`
	// Says is one line: the guarantee that held ("one booking, 2 seats, and
	// the retry got the same booking back"), or the consequence in the
	// user's terms ("charged twice: 2 bookings for one click").
	Says string `json:"says"`
	// Failed are the invariants that did not hold, in the order they are
	// checked: empty, never nil, when every one held (so JSON has
	// "failed": [], the field a script reads).
	Failed []Invariant `json:"failed"`
	// NotChecked are the invariants the run could not check (learn check
	// of a black box that shows too little): a run with one is never
	// Held, and when nothing failed Says names what was not seen.
	NotChecked []Invariant `json:"not_checked,omitempty"`
	// Diagnosis is the design's mistake behind a failed run; on a run that held
	// it is a mistake the design caught (the client's reused key, refused
	// with 409). Nil when there is none.
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
}

// meaning is what the outcomes of one scenario mean.
type meaning struct {
	// guarantee is what the correct design keeps, as a run shows it.
	guarantee func(r *Report) string
	// caught is a mistake that the correct design catches (optional).
	caught *Diagnosis
	// consequence is what the broken variant does to the user, as a run
	// shows it; nil when the scenario has no broken variant.
	consequence func(r *Report) string
	// diagnosis is the broken variant's mistake.
	diagnosis *Diagnosis
	// faults says that the scenario itself makes tries fail (a lost
	// answer, a cut database, a crash); in one that does not, a failed
	// try came from outside and the verdict says so.
	faults bool
}

// Verdict says what report r of a run of s means. Under the scenario's own
// designs it uses the scenario's words; under any other (the design lab's)
// it reads the consequence off the first invariant that failed.
func (s *Scenario) Verdict(r *Report) Verdict {
	m := meanings[s.Name]
	v := Verdict{Held: r.Passed(), Failed: []Invariant{}}
	for _, inv := range r.Invariants {
		switch {
		case inv.NotChecked:
			v.NotChecked = append(v.NotChecked, inv)
		case !inv.Pass:
			v.Failed = append(v.Failed, inv)
		}
	}
	blackBox := r.Facts != nil && r.Facts.Unseen.Design
	own := !blackBox && s.broken != nil && r.Design == *s.broken
	switch {
	case len(v.Failed) == 0 && len(v.NotChecked) > 0:
		v.Says = "not checked: " + notSeen(v.NotChecked)
	case v.Held && own && m.consequence != nil:
		v.Says = "this run did not show the broken design's fault: " + r.Summary()
	case v.Held:
		v.Says = m.guarantee(r)
		if !blackBox && r.Design == s.correct {
			v.Diagnosis = m.caught
		}
		if n := outsideFaults(r); n > 0 && !m.faults {
			// The scenario makes no try fail: these came from outside it
			// (a database restarted, a backend killed). The guarantee held
			// over them, and the numbers above count them.
			v.Says += fmt.Sprintf("; %s met a fault from outside the scenario (a 5xx or no answer) and the client retried", english.Plural(n, "try", "tries"))
		}
		if n := r.Guards.Reruns; n > 0 && !strings.Contains(v.Says, "40001") {
			v.Says += fmt.Sprintf("; PostgreSQL failed %s with 40001 and the engine ran %s again", english.Plural(n, "transaction", ""), map[bool]string{true: "it", false: "each"}[n == 1])
		}
		if n := serialized(r); n > 0 {
			v.Says += fmt.Sprintf("; %s answered 503 serialization_failure (40001), and the client's retry got the booking", english.Plural(n, "try", "tries"))
		}
		if n := inFlight(r); n > 0 && !strings.Contains(v.Says, engine.CodeInProgress) {
			v.Says += fmt.Sprintf("; %s answered 409 %s at once, and the client's retry, told by the code, got the booking", english.Plural(n, "try", "tries"), engine.CodeInProgress)
		}
	case own && m.consequence != nil:
		v.Says, v.Diagnosis = m.consequence(r), m.diagnosis
	case !blackBox && r.Design == s.correct:
		v.Says = fmt.Sprintf("the correct design broke %s: this is a bug in learn, please report it", english.Plural(len(v.Failed), "invariant", ""))
	default:
		v.Says = consequenceOf(worst(v.Failed), r)
	}
	return v
}

// notSeen says which facts the not-checked invariants missed, each once:
// "the bookings and the seats could not be read".
func notSeen(invs []Invariant) string {
	var said []string
	for _, inv := range invs {
		d := strings.TrimSuffix(strings.TrimPrefix(inv.Detail, "not checked: "), " could not be read")
		if !slices.Contains(said, d) {
			said = append(said, d)
		}
	}
	return english.OxfordWordSeries(said, "and") + " could not be read"
}

// harm ranks the invariants by what their failure does to the user, the
// worst first: paying twice, then a wrong answer, then being refused.
var harm = []string{InvOneBookingPerIntent, InvAnswerIsOwn, InvSeatsNotNegative, InvAnswerMatches, InvAnswerStored, InvIntentGetsItsBook,
	InvKeysPerUser, InvRefusalWritesNothing, InvNoAnswerRetried, InvRefusalFinal, InvTriesBounded, InvBacksOff, InvNoServerError, InvOneBookingPerTry, InvOnePerKey, InvSeatsMatchBookings}

// worst is the failed invariant that harms the user most.
func worst(failed []Invariant) Invariant {
	best := failed[0]
	rank := func(inv Invariant) int {
		if i := slices.Index(harm, inv.Name); i >= 0 {
			return i
		}
		return len(harm)
	}
	for _, inv := range failed[1:] {
		if rank(inv) < rank(best) {
			best = inv
		}
	}
	return best
}

// consequenceOf says, in the user's terms, what a failed invariant did.
func consequenceOf(inv Invariant, r *Report) string {
	switch inv.Name {
	case InvOneBookingPerIntent:
		clicks := english.Plural(intents(r), "click", "")
		if intents(r) == 1 {
			clicks = "one click" // as the designs' own verdicts say it
		}
		return fmt.Sprintf("charged more than once: %s for %s", english.Plural(r.BookingRows, "booking", ""), clicks)
	case InvIntentGetsItsBook:
		if said := refusalOf(r); said != "" {
			return "told “" + said + "” for the booking that was made for them"
		}
		if said := lastFailureOf(r); said != "" {
			return "a copy ended on “" + said + "” while another got the booking that was made for them: the API could have replayed it"
		}
		return "told something other than the booking that was made for them"
	case InvNoAnswerRetried:
		if inFlightEnded(r) {
			return "given up on an answer that asked to be retried: the client took a 409 request_in_progress for a final refusal, with tries left"
		}
		return "left without an answer: a try that got no answer, or a 5xx, was never tried again, though a booking may exist"
	case InvTriesBounded:
		return "kept waiting: the client sent the same click more than 3 times, where the lesson's rule stops"
	case InvAnswerIsOwn:
		return "shown another user's booking, a data leak: " + leakOf(r)
	case InvAnswerMatches:
		return "given a booking of another event or quantity than asked"
	case InvAnswerStored:
		return "told of a booking that the table does not hold"
	case InvRefusalWritesNothing:
		return "refused, and yet a booking was stored for the refused request"
	case InvKeysPerUser:
		if said := refusalOf(r); said != "" {
			return "refused with “" + said + "” for a key that only another user had used"
		}
		if said := lastFailureOf(r); said != "" {
			return "failed on every try with “" + said + "” for a key that only another user had used"
		}
		return "refused with 409, or failed on every try, for a key that only another user had used"
	case InvRefusalFinal:
		return "a final refusal was sent again, and the user kept waiting for it"
	case InvOnePerKey:
		return "one key now holds more than one booking"
	case InvSeatsNotNegative:
		return "the event is oversold"
	case InvSeatsMatchBookings:
		return "the seats taken and the bookings disagree"
	case InvOneBookingPerTry:
		return "the answers to one click named different bookings"
	case InvBacksOff:
		_, first, _ := strings.Cut(inv.Detail, ": ")
		return "sent again too soon: " + first + " (a client that does not wait turns one slow API into a retry storm)"
	case InvNoServerError:
		said := inv.Detail
		if _, q, ok := strings.Cut(said, ": “"); ok {
			said = "“" + q
		}
		return "answered " + said + " by the API itself, where it should have booked, replayed or refused: a 500 is a fault of the API, even where a retry gets past it"
	}
	return inv.Name
}

// refusalOf is the first 4xx answer of r's tries as a person reads it
// ("409 Not enough seats left: …"), or "" when there is none.
func refusalOf(r *Report) string {
	for _, a := range r.Attempts {
		for _, t := range a.Tries {
			if t.Status < 400 || t.Status > 499 {
				continue
			}
			if t.Answer != nil && t.Answer.Error != nil && t.Answer.Error.Message != "" {
				return fmt.Sprintf("%d %s", t.Status, t.Answer.Error.Message)
			}
			return fmt.Sprint(t.Status)
		}
	}
	return ""
}

// lastFailureOf is the first 5xx that a copy ended on ("500 the
// message"), or "".
func lastFailureOf(r *Report) string {
	for _, a := range r.Attempts {
		if n := len(a.Tries); n > 0 {
			if t := a.Tries[n-1]; t.Status >= 500 {
				if t.Answer != nil && t.Answer.Error != nil && t.Answer.Error.Message != "" {
					return fmt.Sprintf("%d %s", t.Status, cutWords(t.Answer.Error.Message, 120))
				}
				return fmt.Sprint(t.Status)
			}
		}
	}
	return ""
}

// cutWords is s cut to at most n bytes, with an ellipsis.
func cutWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.TrimRight(s[:n], " ") + "…"
}

// intents is how many intents the run's browser had.
func intents(r *Report) int {
	seen := map[int]bool{}
	for _, a := range r.Attempts {
		seen[a.Intent] = true
	}
	return len(seen)
}

// DiagnosisOf is the diagnosis of the mistake that variant v of the named scenario shows (a broken
// design's mistake, or the one the correct design catches), or nil.
func DiagnosisOf(name string, v Variant) *Diagnosis {
	m, ok := meanings[name]
	switch {
	case !ok:
		return nil
	case v == Broken:
		return m.diagnosis
	}
	return m.caught
}

// outsideFaults counts the tries of r that got a 5xx or no answer.
// serialized counts the tries of r answered 503 serialization_failure:
// PostgreSQL failed their transaction with 40001, and the design answered
// so rather than run it again (on-40001=answer-503).
func serialized(r *Report) int { return answeredCode(r, api.CodeSerializationFailure) }

// inFlight counts the tries of r answered 409 request_in_progress: another
// request with the key was still being processed (in-flight=answer-409).
func inFlight(r *Report) int { return answeredCode(r, engine.CodeInProgress) }

// answeredCode counts the tries of r answered with error code code.
func answeredCode(r *Report, code string) int {
	n := 0
	for _, a := range r.Attempts {
		for _, t := range a.Tries {
			if t.Code == code {
				n++
			}
		}
	}
	return n
}

// inFlightEnded reports whether a copy of r ended on a 409
// request_in_progress.
func inFlightEnded(r *Report) bool {
	for _, a := range r.Attempts {
		if k := len(a.Tries); k > 0 && inProgress(a.Tries[k-1].Status, a.Tries[k-1].Code) {
			return true
		}
	}
	return false
}

func outsideFaults(r *Report) int {
	n := 0
	for _, a := range r.Attempts {
		for _, t := range a.Tries {
			if t.Code == api.CodeSerializationFailure {
				continue // the design's own answer (serialized)
			}
			if t.Status >= 500 || t.Error != "" {
				n++
			}
		}
	}
	return n
}

// Spread is when the retries of a run left, on their clients' own clocks
// (TryResult.SentAt), in windows of 100 ms: a picture of a retry storm.
type Spread struct {
	Retries     int           // tries after the first, of every intent and copy
	Peak        int           // the most retries in one window
	PeakAt      time.Duration // the start of the first such window
	First, Last time.Duration // the first and the last retry's time
	Windows     []int         // retries per window, from First's window to Last's
}

// SpreadWindow is the width of one window of a Spread.
const SpreadWindow = 100 * time.Millisecond

// SpreadShown is how many retries a run has before the screens draw their
// Spread: fewer say nothing a storm would.
const SpreadShown = 5

// RetrySpread is the Spread of r's retries.
func RetrySpread(r *Report) Spread {
	var at []time.Duration
	for _, a := range r.Attempts {
		for _, t := range a.Tries {
			if t.Try > 1 {
				at = append(at, t.SentAt)
			}
		}
	}
	var sp Spread
	if len(at) == 0 {
		return sp
	}
	slices.Sort(at)
	sp.Retries, sp.First, sp.Last = len(at), at[0], at[len(at)-1]
	base := sp.First.Truncate(SpreadWindow)
	sp.Windows = make([]int, int((sp.Last.Truncate(SpreadWindow)-base)/SpreadWindow)+1)
	for _, t := range at {
		w := int((t.Truncate(SpreadWindow) - base) / SpreadWindow)
		if sp.Windows[w]++; sp.Windows[w] > sp.Peak {
			sp.Peak, sp.PeakAt = sp.Windows[w], base+time.Duration(w)*SpreadWindow
		}
	}
	return sp
}

// Says says the spread in a clause: "the retries came as one spike, 8 in
// the 100 ms at +1.0 s" or "the retries spread over +1.0 s to +1.9 s, at
// most 2 in any 100 ms".
func (sp Spread) Says() string {
	switch {
	case sp.Retries == 0:
		return "no retry"
	case sp.Peak == sp.Retries && sp.Retries > 1:
		return fmt.Sprintf("the retries came as one spike, all %d in the 100 ms from +%.1f s", sp.Retries, sp.PeakAt.Seconds())
	}
	return fmt.Sprintf("the %s spread over +%.1f s to +%.1f s, at most %d in any 100 ms", english.PluralWord(sp.Retries, "retry", "retries"),
		sp.First.Truncate(SpreadWindow).Seconds(), sp.Last.Truncate(SpreadWindow).Seconds(), sp.Peak)
}

// Bars draws the spread, a line per window that holds a retry: "+1.0 s
// ████████ 8", each held whole by non-breaking spaces.
func (sp Spread) Bars() []string {
	var out []string
	base := sp.First.Truncate(SpreadWindow)
	for i, n := range sp.Windows {
		if n > 0 {
			out = append(out, fmt.Sprintf("+%.1f\u00a0s\u00a0%s\u00a0%d", (base+time.Duration(i)*SpreadWindow).Seconds(), strings.Repeat("█", n), n))
		}
	}
	return out
}
