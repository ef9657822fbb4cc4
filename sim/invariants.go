package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize/english"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Facts are what a finished run leaves for the judge, as raw as they come:
// every intent with the user who sent it and what each of its tries got
// back, the bookings table and the seats afterwards, and, where the
// engine's trace was kept, which try created which booking. Every verdict
// (play, demo, Break it, the lab) is [Judge] of a run's Facts.
type Facts struct {
	// Outcomes are the intents (and copies) the browsers sent, each with
	// its token (whose it is) and every try, with the answer it got.
	Outcomes []client.Outcome
	// Users maps a bearer token to its user: who asked.
	Users map[string]string
	// Bookings is the bookings table after the run, ordered by id.
	Bookings []engine.BookingRow
	// SeatsAtStart, SeatsLeft and LowestSeatsLeft are of the run's
	// events: summed at the start and afterwards, and the lowest
	// seats_left of one event afterwards.
	SeatsAtStart, SeatsLeft, LowestSeatsLeft int
	// Tries is how many tries the run's client was allowed per intent; 0
	// is the lesson's rule (client.DefaultBackoff's 3). A client held to
	// one try (learn exercises' races) gave up on nothing it could retry.
	Tries int
	// Created maps a try to the bookings it created (the COMMITs of new
	// bookings in the trace). Nil when the run kept no trace: then the
	// invariant that needs it is not checked.
	Created map[TryRef][]string
	// ServerErrors are the 5xx answers the API gave of its own, by try,
	// each as it read ("500 duplicate key value …"): not those the
	// network put in the place of its answer, and not 503 Service
	// Unavailable, an API's "try again" (the client's rule retries it).
	// Nil when not known: then the invariant that needs it is left out.
	// learn check's proxy reads every answer, and none of its scenarios
	// gives the API a reason for a 500; a run of learn's engine
	// (ReadFacts) counts the 500 internal answers of its API instances,
	// not the front door's 502 and 504 for an instance that died.
	ServerErrors map[TryRef]string
	// Waits are how long the client waited before each of its retries,
	// by try: for the learner's own client, from the previous try's
	// arrival at learn's proxy to this one's (the previous try's answer
	// and the client's wait); for learn's client in a scenario, its own
	// wait on its clock. Backoff is what the client was told to wait
	// before its second and third tries. Nil when not known (learn check
	// of another API, whose client's rule is learn's own): then the
	// invariant that needs them is left out.
	Waits   map[TryRef]time.Duration
	Backoff []time.Duration
	// Unseen says which of these facts the run could not read: learn check
	// of a black box reads only what its config lets it. An invariant
	// that needs an unseen fact is not checked, never passed.
	Unseen Unseen
}

// Unseen names the facts of a run that were not read. The zero value is
// a run of learn's own engine, where every fact is read.
type Unseen struct {
	// Rows: the bookings table (Facts.Bookings holds only what was read
	// of it, or nothing).
	Rows bool
	// Seats: the seats at the start and afterwards.
	Seats bool
	// Created: which try created which booking (the engine's trace);
	// with Created nil and this set, a refusal that wrote is read off the
	// rows, for the intents whose every try was refused; with Created nil
	// and this false the invariant is left out, as for a run that kept no
	// trace.
	Created bool
	// Design: the design behind the API is not known (a black box), so a
	// verdict cannot name the scenario's broken design as the cause.
	Design bool
}

// checked is inv, or inv not checked for want of the named fact.
func checked(inv Invariant, unseen bool, fact string) Invariant {
	if unseen {
		return Invariant{Name: inv.Name, NotChecked: true, Detail: "not checked: " + fact + " could not be read"}
	}
	return inv
}

// TryRef names one try of one copy of one intent.
type TryRef struct{ Intent, Copy, Try int }

// ReadFacts gathers the facts of a finished run whose events had
// seatsAtStart seats in all: the tables by queries of db, the tries from
// outcomes, the bookings each try created from events, the run's trace
// (nil: not known).
func ReadFacts(ctx context.Context, db engine.Querier, seatsAtStart int, outcomes []client.Outcome, events []trace.Event) (Facts, error) {
	f := Facts{Outcomes: outcomes, Users: api.DemoUsers(), SeatsAtStart: seatsAtStart}
	err := db.QueryRow(ctx, `SELECT coalesce(sum(seats_left), 0), coalesce(min(seats_left), 0) FROM events`).
		Scan(&f.SeatsLeft, &f.LowestSeatsLeft)
	if err != nil {
		return f, fmt.Errorf("read the seats after the run: %w", err)
	}
	rows, err := engine.ReadRows(ctx, db)
	if err != nil {
		return f, fmt.Errorf("read the bookings after the run: %w", err)
	}
	f.Bookings = rows.Bookings
	f.ServerErrors = map[TryRef]string{}
	for _, o := range outcomes {
		for _, t := range o.Tries {
			if t.Status == http.StatusInternalServerError && t.Code == api.CodeInternal {
				msg := ""
				if t.Answer != nil && t.Answer.Error != nil {
					msg = " " + t.Answer.Error.Message
				}
				f.ServerErrors[TryRef{o.Intent.Number, t.Copy, t.Try}] = "500" + msg
			}
		}
	}
	if events != nil {
		f.Created = map[TryRef][]string{}
		for _, ev := range events {
			if ev.Kind == trace.KindCommit && !ev.Replayed && ev.BookingID != "" {
				ref := TryRef{ev.Intent, ev.Copy, ev.Try}
				f.Created[ref] = append(f.Created[ref], ev.BookingID)
			}
		}
	}
	return f, nil
}

// CheckInvariants is [Judge] of the facts [ReadFacts] gathers.
func CheckInvariants(ctx context.Context, db engine.Querier, seatsAtStart int, outcomes []client.Outcome, events []trace.Event) ([]Invariant, error) {
	f, err := ReadFacts(ctx, db, seatsAtStart, outcomes, events)
	if err != nil {
		return nil, err
	}
	return Judge(f), nil
}

// intentFacts is one intent as the judge sees it: all its copies, the user
// who sent it, every key its tries carried, what it asked for, and the
// booking rows that are its own (the user's, with one of its keys, of its
// event and quantity), oldest first.
type intentFacts struct {
	number   int
	user     string
	keys     map[string]bool
	event    int64
	quantity int
	outs     []client.Outcome
	rows     []engine.BookingRow
}

// intentsOf groups f's outcomes by intent, in intent order, with their
// rows.
func intentsOf(f Facts) []*intentFacts {
	by := map[int]*intentFacts{}
	var order []*intentFacts
	for _, o := range f.Outcomes {
		if o.Intent.Number == 0 {
			continue // an outcome that never ran
		}
		in := by[o.Intent.Number]
		if in == nil {
			in = &intentFacts{number: o.Intent.Number, user: f.Users[o.Token], keys: map[string]bool{},
				event: o.Intent.EventID, quantity: o.Intent.Quantity}
			by[o.Intent.Number] = in
			order = append(order, in)
		}
		in.outs = append(in.outs, o)
		in.keys[o.Intent.Key.String()] = true
		for _, t := range o.Tries {
			if t.Key != "" {
				in.keys[t.Key] = true
			}
		}
	}
	for _, in := range order {
		for _, b := range f.Bookings {
			if b.UserID == in.user && in.keys[b.Key] && b.EventID == in.event && b.Quantity == in.quantity {
				in.rows = append(in.rows, b)
			}
		}
	}
	slices.SortFunc(order, func(a, b *intentFacts) int { return cmp.Compare(a.number, b.number) })
	return order
}

// bookingAnswer is one answer with a booking that reached the browser: the
// booking as the table holds it (or, when the table does not hold it, as
// the answer said it).
type bookingAnswer struct {
	in      *intentFacts
	out     client.Outcome
	try     client.TryResult
	booking engine.BookingRow
	stored  bool
}

// bookingsAnswered lists every answer of f that carried a booking.
func bookingsAnswered(f Facts, intents []*intentFacts) []bookingAnswer {
	byID := map[string]engine.BookingRow{}
	for _, b := range f.Bookings {
		byID[b.ID] = b
	}
	var out []bookingAnswer
	for _, in := range intents {
		for _, o := range in.outs {
			for _, t := range o.Tries {
				if t.Answer == nil || t.Answer.Booking == nil {
					continue
				}
				a := t.Answer.Booking
				b, ok := byID[a.ID]
				if !ok {
					b = engine.BookingRow{ID: a.ID, UserID: a.UserID, EventID: a.EventID, Quantity: a.Quantity, Key: a.IdempotencyKey}
				}
				out = append(out, bookingAnswer{in: in, out: o, try: t, booking: b, stored: ok})
			}
		}
	}
	return out
}

// Judge checks every invariant on the facts of a finished run, in the
// order of [harm]'s opposite: the table first, then the answers, then the
// client. It is the one judge of learn: every verdict is read off its
// result.
func Judge(f Facts) []Invariant {
	intents := intentsOf(f)
	answers := bookingsAnswered(f, intents)

	booked := 0
	pairs := map[string]int{}
	for _, b := range f.Bookings {
		booked += b.Quantity
		if !b.KeyExpired { // a row whose key expired holds none now
			pairs[b.UserID+"\x00"+b.Key]++
		}
	}
	dupKeys := 0
	for _, n := range pairs {
		if n > 1 {
			dupKeys++
		}
	}
	taken := f.SeatsAtStart - f.SeatsLeft
	rows, seats := "the bookings", "the seats"
	both := seats // what the first invariant misses
	if f.Unseen.Rows {
		both = rows
	}
	inv := []Invariant{
		checked(Invariant{Name: InvSeatsMatchBookings, Pass: taken == booked, Detail: fmt.Sprintf("%d seats taken, %d booked", taken, booked)},
			f.Unseen.Rows || f.Unseen.Seats, both),
		checked(Invariant{Name: InvOnePerKey, Pass: dupKeys == 0, Detail: fmt.Sprintf("%s with more than one booking", english.Plural(dupKeys, "(user, key) pair", ""))},
			f.Unseen.Rows, rows),
		checked(Invariant{Name: InvSeatsNotNegative, Pass: f.LowestSeatsLeft >= 0, Detail: fmt.Sprintf("lowest seats_left %d", f.LowestSeatsLeft)},
			f.Unseen.Seats, seats),
	}

	// Every count below is of intents: the copies of one intent (sent at
	// once, with one key) are one intent, and a detail says how many of
	// its copies a count stands for when that is more than one a piece.
	twice, split := newTally(), newTally()
	for _, in := range intents {
		if len(in.rows) > 1 {
			twice.intent(in.number)
		}
	}
	first := map[int]engine.BookingRow{} // intent → the booking of its first answer with one
	for _, a := range answers {
		b, ok := first[a.in.number]
		if !ok {
			first[a.in.number] = a.booking
			continue
		}
		if b.ID != a.booking.ID || b.EventID != a.booking.EventID || b.Quantity != a.booking.Quantity {
			split.intent(a.in.number)
		}
	}
	inv = append(inv,
		Invariant{Name: InvOneBookingPerTry, Pass: split.none(), Detail: split.say("intent got", "intents got", "more than one booking")},
		checked(Invariant{Name: InvOneBookingPerIntent, Pass: twice.none(), Detail: twice.say("intent booked", "intents booked", "more than once")},
			f.Unseen.Rows, rows))

	// The answers: whose booking, of what, stored or not.
	// An answer whose booking the table does not hold, and which does not
	// say whose it is (or of what), cannot be judged on that: a black box
	// whose config points at no user (or event and quantity) in answers.
	var leaks []string
	mismatched, unstored, whoseUnknown, whatUnknown := 0, 0, 0, 0
	for _, a := range answers {
		switch asker := a.in.user; {
		case a.booking.UserID == "":
			whoseUnknown++
		case a.booking.UserID != asker:
			leaks = append(leaks, fmt.Sprintf("%s got %s's booking %s", asker, a.booking.UserID, a.booking.ID))
		}
		switch {
		case a.booking.EventID == 0 || a.booking.Quantity == 0:
			whatUnknown++
		case a.booking.EventID != a.in.event || a.booking.Quantity != a.in.quantity:
			mismatched++
		}
		if !a.stored {
			unstored++
		}
	}
	leakDetail := english.Plural(len(leaks), "answer carries", "answers carry") + " another user's booking"
	if len(leaks) > 0 {
		leakDetail = english.Plural(len(leaks), "answer", "") + ": " + strings.Join(slices.Compact(leaks), ", ")
	}
	// Intents that booked, and got another answer: a 4xx or another
	// booking on any try. A 5xx is a fault the client's retry is for,
	// unless a copy ended on it while another copy of the intent was
	// answered with the booking: the API could have replayed it, and
	// left that copy without it.
	wrong := newTally()
	for _, in := range intents {
		if len(in.rows) == 0 {
			continue
		}
		replayable := false
		for _, o := range in.outs {
			if o.Answer != nil && o.Answer.Booking != nil && o.Answer.Booking.ID == in.rows[0].ID {
				replayable = true
			}
		}
		for _, o := range in.outs {
			for i, t := range o.Tries {
				a := t.Answer
				if a == nil || asksRetry(t.Status, t.Code) && (i < len(o.Tries)-1 || !replayable) {
					continue
				}
				if a.Booking == nil || a.Booking.ID != in.rows[0].ID {
					wrong.copy(o)
					break
				}
			}
		}
	}
	inv = append(inv,
		checked(Invariant{Name: InvAnswerIsOwn, Pass: len(leaks) == 0, Detail: leakDetail},
			len(leaks) == 0 && whoseUnknown > 0, "whose booking an answer carries"),
		checked(Invariant{Name: InvAnswerMatches, Pass: mismatched == 0, Detail: fmt.Sprintf("%s a booking of another event or quantity", english.Plural(mismatched, "answer carries", "answers carry"))},
			mismatched == 0 && whatUnknown > 0, "the event and quantity of a booking answered"),
		checked(Invariant{Name: InvAnswerStored, Pass: unstored == 0, Detail: fmt.Sprintf("%s a booking the table does not hold", english.Plural(unstored, "answer names", "answers name"))},
			f.Unseen.Rows, rows),
		checked(Invariant{Name: InvIntentGetsItsBook, Pass: wrong.none(), Detail: wrong.say("intent booked", "intents booked", "but got another answer")},
			f.Unseen.Rows, rows))

	// A refusal writes nothing: no try bookingAnswer 4xx created a booking.
	if f.Created != nil {
		wrote := newTally()
		for _, in := range intents {
			for _, o := range in.outs {
				for _, t := range o.Tries {
					if refused(t.Status, t.Code) && len(f.Created[TryRef{in.number, o.Intent.Copy, t.Try}]) > 0 {
						wrote.copy(o)
						break
					}
				}
			}
		}
		inv = append(inv, Invariant{Name: InvRefusalWritesNothing, Pass: wrote.none(), Detail: wrote.say("intent was", "intents were", "refused by a try that stored a booking")})
	} else if f.Unseen.Created {
		// Without the trace, the rows still show it for an intent whose
		// every try, of every copy, was answered with a 4xx: nothing
		// else of it could have booked.
		wrote := newTally()
		for _, in := range intents {
			if len(in.rows) > 0 && onlyRefused(in) {
				wrote.intent(in.number)
			}
		}
		inv = append(inv, checked(Invariant{Name: InvRefusalWritesNothing, Pass: wrote.none(), Detail: wrote.say("intent was", "intents were", "refused on every try, and a booking was stored for it")},
			f.Unseen.Rows, rows))
	}

	// The client: what it sent again, what it gave up on, and the 409s
	// for keys of others.
	abandoned, resent, blocked, unbounded := newTally(), newTally(), newTally(), newTally()
	allowed := len(client.DefaultBackoff) + 1
	if f.Tries > 0 {
		allowed = f.Tries
	}
	for _, o := range f.Outcomes {
		if o.Intent.Number == 0 {
			continue
		}
		if n := len(o.Tries); n > 0 && n < allowed && (o.Tries[n-1].Error != "" || asksRetry(o.Tries[n-1].Status, o.Tries[n-1].Code)) && !errors.Is(o.Err, context.Canceled) {
			abandoned.copy(o)
		}
		if len(o.Tries) > len(client.DefaultBackoff)+1 { // the lesson's bound, whatever the run allowed
			unbounded.copy(o)
		}
		for i, t := range o.Tries {
			if refused(t.Status, t.Code) && i < len(o.Tries)-1 {
				resent.copy(o)
				break
			}
		}
		if keyRefusal(o.Answer) && !keyUsedBy(f.Outcomes, o) || failedOnKeyOfOther(f.Outcomes, o) {
			blocked.copy(o)
		}
	}
	inv = append(inv,
		Invariant{Name: InvRefusalFinal, Pass: resent.none(), Detail: resent.say("intent", "intents", "sent again after a 4xx")},
		Invariant{Name: InvNoAnswerRetried, Pass: abandoned.none(), Detail: abandoned.say("intent", "intents", "given up after a try with no answer, a 5xx or a 409 request_in_progress, with tries left")},
		Invariant{Name: InvTriesBounded, Pass: unbounded.none(), Detail: unbounded.say("intent", "intents", fmt.Sprintf("sent more than %d times", len(client.DefaultBackoff)+1))},
		Invariant{Name: InvKeysPerUser, Pass: blocked.none(), Detail: blocked.say("intent got", "intents got", "409, or a 5xx on every try, for a key only another user had used")})
	if f.Waits != nil {
		inv = append(inv, Invariant{Name: InvBacksOff, Pass: len(hurried(f)) == 0, Detail: hurriedSay(f)})
	}
	if f.ServerErrors != nil {
		inv = append(inv, Invariant{Name: InvNoServerError, Pass: len(f.ServerErrors) == 0, Detail: serverErrors(f.ServerErrors)})
	}
	return inv
}

// failedOnKeyOfOther reports whether o got a 5xx on every try and no
// booking, while another user's intent booked with the same key: the API
// failed the user over a key only another user had used (a constraint on
// the key alone under a lookup by user: the unique violation answered
// 500).
func failedOnKeyOfOther(outcomes []client.Outcome, o client.Outcome) bool {
	if len(o.Tries) == 0 || o.Answer != nil && o.Answer.Booking != nil {
		return false
	}
	for _, t := range o.Tries {
		if t.Status < 500 {
			return false
		}
	}
	for _, other := range outcomes {
		if other.Token != o.Token && other.Intent.Key == o.Intent.Key && other.Answer != nil && other.Answer.Booking != nil {
			return true
		}
	}
	return false
}

// onlyRefused reports whether every try of every copy of in got a 4xx.
func onlyRefused(in *intentFacts) bool {
	for _, o := range in.outs {
		for _, t := range o.Tries {
			if !refused(t.Status, t.Code) {
				return false
			}
		}
	}
	return true
}

// keyRefusal reports whether a is a refusal for the key: learn's 409
// key_reused, or, from an API that is not learn's, a 409 or 422 with no
// booking and no code that names another reason (learn's own codes for
// seats, events and input).
func keyRefusal(a *client.Answer) bool {
	if a == nil || a.Error == nil || a.Booking != nil {
		return false
	}
	switch a.Error.Code {
	case engine.CodeKeyReused:
		return true
	case engine.CodeNotEnoughSeats, engine.CodeEventStarted, engine.CodeEventNotFound, engine.CodeInvalidKey, engine.CodeInvalidQty, engine.CodeUnauthorized, engine.CodeInProgress:
		return false
	}
	return a.Status == 409 || a.Status == 422
}

// asksRetry reports whether an answer asks to be tried again with the same
// key: a 5xx, or the one 4xx that is not final, 409 request_in_progress
// (the first request with the key is still being processed).
func asksRetry(status int, code string) bool {
	return status >= 500 || inProgress(status, code)
}

// refused reports whether an answer is a refusal, final: a 4xx other than
// 409 request_in_progress.
func refused(status int, code string) bool {
	return status >= 400 && status < 500 && !inProgress(status, code)
}

// inProgress reports whether an answer is 409 request_in_progress.
func inProgress(status int, code string) bool {
	return status == http.StatusConflict && code == engine.CodeInProgress
}
