package sim

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize/english"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// The diagnoses of the lesson's "Break it" table, in its order (lesson,
// "Break it"). The lesson page says the same; quiz's tests hold the two
// together.
var (
	diagNewKeyPerRetry = &Diagnosis{
		Symptom: "One click books, and charges, the user twice",
		Cause:   "The client generated a fresh key for each retry",
		Where:   "The client's key handling (sim/client/client.go → Client.Book)",
		Fix:     "Make one key per intent, when the user decides to book, and send it again on every retry (NewIntent)",
	}
	diagLookupAfterSeatCheck = &Diagnosis{
		Symptom: "Retrying a booking that got the last seats answers 409 “" + engine.MsgNotEnoughSeats + "”",
		Cause:   "The key was looked up only after the seat check",
		Where:   "The order of the steps inside the transaction (sim/engine/booking.go → Engine.BookTicket)",
		Fix:     "Look the key up first, right after locking the event row: a repeat gets the first answer, whatever has changed since",
	}
	diagKeyReusedByClient = &Diagnosis{
		Symptom: "409 “" + engine.MsgKeyReused + "”",
		Cause:   "The client sent one key for two different bookings",
		Where:   "Create a new key for every intent (NewIntent in sim/client/client.go)",
		Fix:     "A changed quantity is a new intent with a new key (Intent.WithQuantity); the engine's 409 is right",
	}
)

// meanings says, for each scenario, what its runs mean: the guarantee of the
// correct design and the consequence and fault of the broken one.
var meanings = map[string]meaning{
	"lost-answer": {
		faults: true,
		guarantee: func(r *Report) string {
			return withGuards(fmt.Sprintf("%s, %s, and the retry got the same booking back", bookingsWord(r.BookingRows), seats(r.SeatsTaken)), r)
		},
		consequence: chargedTimes("for one click"),
		diagnosis: &Diagnosis{
			Symptom: "One click books, and charges, the user twice",
			Cause:   "The engine never looks the key up, and no UNIQUE constraint stops the retry's INSERT",
			Where:   "sim/engine/booking.go → Engine.BookTicket (the lookup after the row lock) and sim/engine/schema.sql (the UNIQUE constraint)",
			Fix:     "Look the key up right after locking the event row and replay what it finds; keep UNIQUE (user_id, idempotency_key)",
		},
	},
	"concurrent-copies": {
		guarantee:   func(r *Report) string { return copiesHeld(r, "") },
		consequence: chargedTimes("for one click"),
		diagnosis: &Diagnosis{
			Symptom: "Simultaneous copies of one request make a booking each",
			Cause:   "Check, then insert, with no row lock and no UNIQUE constraint: every copy looks the key up before any has inserted",
			Where:   "sim/engine/booking.go → Engine.BookTicket (SELECT … FOR UPDATE before the lookup) and sim/engine/schema.sql",
			Fix:     "Lock the event row before looking the key up, so copies queue and the later ones replay; keep UNIQUE (user_id, idempotency_key)",
		},
	},
	"copies-repeatable-read": {
		guarantee: func(r *Report) string {
			return copiesHeld(r, "the transaction at "+r.Design.Isolation.SQL()+" (the database's default: REPEATABLE READ)")
		},
		consequence: worstConsequence,
		diagnosis: &Diagnosis{
			Symptom: "At REPEATABLE READ, copies of one request that waited for the row lock are answered 500",
			Cause:   "PostgreSQL fails a transaction whose snapshot is older than a row it locks (40001, serialization failure), and the engine takes that for an error like any other",
			Where:   "sim/engine/booking.go → Engine.BookTicket (the run of the transaction again on 40001)",
			Fix:     "On 40001, roll back and run the whole transaction again, a few times, in a new snapshot: it then sees the booking and replays it (or answer 503 with Retry-After, and let the client retry)",
		},
	},
	"retry-storm": {
		faults: true, // the 503s are the slow booking's
		guarantee: func(r *Report) string {
			return withGuards(fmt.Sprintf("%d requests met a slow batch's row locks, were answered 503 event_busy, and each retried after its backoff: %s, %s; %s",
				len(r.Attempts), bookingsWord(r.BookingRows), seats(r.SeatsTaken), RetrySpread(r).Says()), r)
		},
		consequence: worstConsequence,
		diagnosis: &Diagnosis{
			Symptom: "Every client retries the instant its 503 arrives",
			Cause:   "The client has no backoff: the retries of all the clients that failed together arrive together, at the API that has just said it cannot keep up",
			Where:   "the client's retry rule (learn's: sim/client/client.go → DefaultBackoff, Client.Jitter)",
			Fix:     "Wait before each retry, longer each time (1 s, then 2 s), with a random part (jitter) so that clients that failed together retry apart, and never sooner than Retry-After",
		},
	},
	"late-retry": {
		faults: true, // the lost answer is the scenario's
		guarantee: func(r *Report) string {
			return withGuards(fmt.Sprintf("the retry 25 hours late got the same booking back: %s", bookingsWord(r.BookingRows)), r)
		},
		consequence: chargedTimes("for one click: the key had expired"),
		diagnosis: &Diagnosis{
			Symptom: "A retry that comes a day late books a second time",
			Cause:   "The key expires from its row after 24 hours, and this client retried later than that: the API took the retry for a new request, within its contract",
			Where:   "the key's expiry (learn's sweeper: sim/engine/schema.go → SweepKeys), against the client's retry window",
			Fix:     "Keep the key as long as the booking (it is 16 bytes in the row), or choose an expiry longer than every retry any client sends, write it in the API's contract, and have clients give up before it",
		},
	},
	"request-in-flight": {
		faults: true, // the lock wait's bound answers 503 under in-flight=wait
		guarantee: func(r *Report) string {
			said := copiesHeld(r, "one slow and held before COMMIT")
			if n := answeredCode(r, api.CodeEventBusy); n > 0 {
				said += fmt.Sprintf("; %s waited for the row lock past the engine's bound (%s here) and %s answered 503 event_busy, and the client's retry got the booking",
					english.Plural(n, "try", "tries"), inFlightLockWait, map[bool]string{true: "was", false: "were"}[n == 1])
			}
			return said
		},
		consequence: func(r *Report) string {
			return "told the booking failed while it was being made: the client took 409 " + engine.CodeInProgress + ", which asks to be retried, for a final refusal, and the slow copy booked it"
		},
		diagnosis: &Diagnosis{
			Symptom: "A double click shows the user a 409 refusal, and the booking exists",
			Cause:   "The API answers a copy whose key is still being booked 409 request_in_progress with Retry-After, and the client reads the status alone: every 4xx is final to it",
			Where:   "the client's retry rule (learn's: sim/client/client.go → ShouldRetry)",
			Fix:     "Switch on the error code, not the status: retry 409 request_in_progress after Retry-After with the same key, as a 5xx, and take the other 409s (key_reused, not_enough_seats) as final",
		},
	},
	"page-reload": {
		faults: true,
		guarantee: func(r *Report) string {
			return withGuards(fmt.Sprintf("the reloaded page retried with the key it saved: %s in all, and the retry got the same booking back", bookingsWord(r.BookingRows)), r)
		},
		consequence: chargedTimes("for one click"),
		diagnosis: &Diagnosis{
			Symptom: "A reload of the page while it waits to retry books a second time",
			Cause:   "The page keeps the idempotency key in memory only: the reload loses it, the page drawn again makes a new key, and the server takes the retry for a new intent",
			Where:   "the browser's code (learn's client: sim/client, Client.KeyInMemory)",
			Fix:     "Save the key with the form's state (sessionStorage) before the request is sent, and send it again after a reload; or let the server make the key in a first step (a draft booking the reloaded page finds)",
		},
	},
	"different-quantity": {
		guarantee: func(r *Report) string {
			return withGuards(fmt.Sprintf("the key sent again for another quantity was refused: %s, nothing written", finalStatusOf(r, 2)), r)
		},
		caught: diagKeyReusedByClient,
		consequence: func(*Report) string {
			return "asked for 3 seats and silently given the first booking's 2"
		},
		diagnosis: &Diagnosis{
			Symptom: "A request for 3 seats answers 200 with a booking of 2",
			Cause:   "The engine replays whatever booking holds the key, without comparing its event and quantity with the request",
			Where:   "sim/engine/booking.go → Engine.Compare",
			Fix:     "Compare the stored event and quantity with the request: anything different is 409 “" + engine.MsgKeyReused + "”",
		},
	},
	"last-seats": {
		faults: true,
		guarantee: func(r *Report) string {
			return withGuards(fmt.Sprintf("the retry got its booking back, with %s left", seats(r.Facts.seatsLeftOr(0))), r)
		},
		consequence: func(*Report) string {
			return "told “" + engine.MsgNotEnoughSeats + "” for the seats the user already has"
		},
		diagnosis: diagLookupAfterSeatCheck,
	},
	"new-key-per-retry": {
		faults: true,
		guarantee: func(r *Report) string {
			return withGuards(fmt.Sprintf("%s %s for the intent: the retry got the same booking, %s in all", oneOr(keysSent(r)), english.PluralWord(keysSent(r), "key", ""), bookingsWord(r.BookingRows)), r)
		},
		consequence: chargedTimes("for one click"),
		diagnosis:   diagNewKeyPerRetry,
	},
	"key-reuse-two-events": {
		guarantee: func(r *Report) string {
			return bookingsWord(r.BookingRows) + " for one key: " + refusedBy(r)
		},
		consequence: func(r *Report) string {
			return fmt.Sprintf("one key now holds %d bookings, on two events", r.BookingRows)
		},
		diagnosis: &Diagnosis{
			Symptom: "One key, sent for two events at the same instant, makes two bookings",
			Cause:   "No UNIQUE constraint on (user_id, idempotency_key): locks on two different event rows never make the two requests wait for each other",
			Where:   "sim/engine/schema.sql (the constraint of the bookings table)",
			Fix:     "UNIQUE (user_id, idempotency_key): the second INSERT fails with 23505, its whole transaction rolls back, seats included, and it answers 409",
		},
	},
	"lookup-before-lock": {
		guarantee: func(r *Report) string {
			return bookingsWord(r.BookingRows) + ": " + stoppedBy(r)
		},
		consequence: chargedTimes("for one click"),
		diagnosis: &Diagnosis{
			Symptom: "Two copies of one click, at the same instant, make two bookings",
			Cause:   "The key is looked up before the row lock, and no UNIQUE constraint stops the second INSERT",
			Where:   "sim/engine/booking.go → Engine.BookTicket (where the lookup runs) and sim/engine/schema.sql",
			Fix:     "Keep UNIQUE (user_id, idempotency_key), which settles what the lock does not cover, and look the key up after the lock so that copies replay",
		},
	},
	"two-users-same-key": {
		guarantee: func(r *Report) string {
			return "each user got a booking of their own: " + ownBookings(r)
		},
		consequence: func(r *Report) string {
			return "shown another user's booking, a data leak: " + leakOf(r)
		},
		diagnosis: &Diagnosis{
			Symptom: "A user is answered with another user's booking",
			Cause:   "Keys are unique on their own and looked up by key alone, and the comparison leaves the user out: another user's booking that holds the key is replayed",
			Where:   "sim/engine/schema.sql (UNIQUE (idempotency_key)), sim/engine/booking.go → Engine.find (the lookup by key alone) and Engine.Compare",
			Fix:     "Scope the key to the user: UNIQUE (user_id, idempotency_key), and look it up with the user of the session",
		},
	},
	"replay-after-sellout": {
		faults: true,
		guarantee: func(r *Report) string {
			who := "the first user" // the user of intent 1: ada in the lesson's runs
			if len(r.Attempts) > 0 && r.Attempts[0].User != "" {
				who = r.Attempts[0].User
			}
			return withGuards(fmt.Sprintf("%s's retry got the booking back with %s left", who, seats(r.Facts.seatsLeftOr(0))), r)
		},
	},
	"no-retry-on-4xx": {
		guarantee: func(r *Report) string {
			return fmt.Sprintf("a %s is final: %s %s, no retry", finalStatusOf(r, 1), oneOr(triesSent(r)), english.PluralWord(triesSent(r), "try", ""))
		},
		consequence: func(r *Report) string {
			return fmt.Sprintf("the same 409, %s: the client retried a final answer and kept the user waiting", english.Plural(len(r.Answers), "time", ""))
		},
		diagnosis: &Diagnosis{
			Symptom: "A booking that cannot succeed is sent three times, and the user waits 3 s for the same 409",
			Cause:   "The client retries 4xx answers, which are final",
			Where:   "sim/client/client.go → ShouldRetry",
			Fix:     "Retry only network errors and 5xx answers; a 4xx is the answer",
		},
	},
	"retries-exhausted": {
		faults: true,
		guarantee: func(r *Report) string {
			return fmt.Sprintf("%s stored by the %s that failed, and the same key booked once later", bookingsWord(createdBy(r, 1)), english.Plural(triesOf(r, 1), "try", "tries"))
		},
	},
	"crash-before-commit": {
		faults: true,
		guarantee: func(r *Report) string {
			if st := firstTryStatus(r, 1); st != 0 {
				// The crash comes at a COMMIT after the booking's write:
				// code that books in one statement sends none.
				return fmt.Sprintf("no crash: the first try sent no COMMIT after its booking's write for the crash to come before, and was answered %d; %s in all", st, bookingsWord(r.BookingRows))
			}
			return fmt.Sprintf("the crash rolled its try back (%s stored by it), and the retry made %s", bookingsWord(createdByTry(r, 1, 1)), bookingsWord(r.BookingRows))
		},
	},
	"other-instance": {
		faults: true,
		guarantee: func(r *Report) string {
			return withGuards("the retry on api-2 got the same booking, "+bookingsWord(r.BookingRows)+" in all", r)
		},
		consequence: chargedTimes("for one click: the retry on api-2 booked again"),
		diagnosis: &Diagnosis{
			Symptom: "A retry that lands on another API instance books again",
			Cause:   "Each API instance remembers the keys in its own memory instead of the booking row, and no UNIQUE constraint in the row backs it up",
			Where:   "sim/api/keys.go → MemoryKeys",
			Fix:     "Keep the key in the booking row, under UNIQUE (user_id, idempotency_key): every instance that shares the database sees it",
		},
	},
	"redis-ttl": {
		faults: true,
		guarantee: func(r *Report) string {
			return withGuards(fmt.Sprintf("a crash after COMMIT and a retry 25 hours later both got their booking back: %s for %d clicks", bookingsWord(r.BookingRows), intents(r)), r)
		},
		consequence: func(r *Report) string {
			return fmt.Sprintf("%d bookings for 2 clicks: a crash between the two writes, and a retry sent after the key's 24 h TTL, each booked again", r.BookingRows)
		},
		diagnosis: &Diagnosis{
			Symptom: "Retries after a crash, or a day later, book again",
			Cause:   "Redis and PostgreSQL share no transaction, a retry sent after the key expired finds nothing, and no UNIQUE constraint in the row backs it up",
			Where:   "sim/api/keys.go → RedisKeys",
			Fix:     "Keep the key in the booking row: it commits with the booking and never expires; a store in front of it needs UNIQUE (user_id, idempotency_key) behind it, and a documented expiry longer than the client's whole retry window",
		},
	},
}

// stoppedBy says what stopped the copies of one click from booking twice,
// naming only the guards that acted in run r.
func stoppedBy(r *Report) string {
	g := r.Guards
	var said []string
	if g.Lookups > 0 {
		said = append(said, "the lookup found the key, and the later copy replayed the booking, writing nothing")
	}
	if g.StoreHits > 0 {
		said = append(said, "the key store had the key, and the later copy replayed the booking")
	}
	if g.Violations > 0 {
		said = append(said, "the constraint stopped the second INSERT (23505), and the loser answered with the winner's booking")
	}
	if len(said) == 0 {
		return "every copy answered with the same booking"
	}
	return strings.Join(said, "; ")
}

// refusedBy says what refused the second use of one key, naming only the
// guards that acted in run r.
func refusedBy(r *Report) string {
	g := r.Guards
	var said []string
	if g.Lookups > 0 {
		said = append(said, "the other request found the key at its lookup and was refused with 409, nothing written")
	}
	if g.Violations > 0 {
		said = append(said, "the other transaction hit the constraint (23505), rolled back, seats included, and answered 409")
	}
	if len(said) == 0 {
		return "the other request was refused with 409"
	}
	return strings.Join(said, "; ")
}

// chargedTimes is the consequence "charged twice: 2 bookings for one
// click", with the run's numbers and the given ending.
func chargedTimes(ending string) func(r *Report) string {
	return func(r *Report) string {
		times := map[int]string{2: "twice", 3: "three times"}[r.BookingRows]
		if times == "" {
			times = fmt.Sprintf("%d times", r.BookingRows)
		}
		return fmt.Sprintf("charged %s: %d bookings %s", times, r.BookingRows, ending)
	}
}

// copiesHeld is the guarantee of a run of simultaneous copies that held:
// "10 copies, [how,] one booking, 2 seats: every copy answered with the
// same booking", and the guards that acted.
func copiesHeld(r *Report, how string) string {
	copies, got := len(r.Attempts), answeredWithABooking(r)
	said := "every copy answered with the same booking"
	if got < copies {
		said = fmt.Sprintf("%d of them answered with the same booking, %d with no booking", got, copies-got)
	}
	if how != "" {
		how += ", "
	}
	return withGuards(fmt.Sprintf("%d copies, %s%s, %s: %s", copies, how, bookingsWord(r.BookingRows), seats(r.SeatsTaken), said), r)
}

// worstConsequence is the consequence of the failed invariant of r that
// harms the user most (consequenceOf): for a broken design whose harm is
// not one count of bookings.
func worstConsequence(r *Report) string {
	var failed []Invariant
	for _, inv := range r.Invariants {
		if !inv.Pass && !inv.NotChecked {
			failed = append(failed, inv)
		}
	}
	if len(failed) == 0 {
		return r.Summary()
	}
	return consequenceOf(worst(failed), r)
}

// seats is "2 seats".
func seats(n int) string { return english.Plural(n, "seat", "") }

// withGuards is said followed by the guards that acted in run r, as
// stoppedBy names them; said alone when none acted.
func withGuards(said string, r *Report) string {
	g := r.Guards
	var acted []string
	if g.Lookups > 0 {
		acted = append(acted, "the lookup found the key"+times(g.Lookups))
	}
	if g.StoreHits > g.RedisHits {
		acted = append(acted, "the instance's memory had the key"+times(g.StoreHits-g.RedisHits))
	}
	if g.RedisHits > 0 {
		acted = append(acted, "Redis had the key"+times(g.RedisHits))
	}
	switch {
	case g.Violations == 1:
		acted = append(acted, "the unique constraint stopped an INSERT (23505), rolled back with its seats")
	case g.Violations > 1:
		acted = append(acted, fmt.Sprintf("the unique constraint stopped %d INSERTs (23505), each rolled back with its seats", g.Violations))
	}
	switch {
	case g.Reruns == 1:
		acted = append(acted, "PostgreSQL failed a transaction with 40001 and the engine ran it again")
	case g.Reruns > 1:
		acted = append(acted, fmt.Sprintf("PostgreSQL failed %d transactions with 40001 and the engine ran each again", g.Reruns))
	}
	if len(acted) == 0 {
		return said
	}
	return said + " (" + strings.Join(acted, "; ") + ")"
}

// times is "" for once, " 9 times" for more.
func times(n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(" %d times", n)
}

// oneOr is "one" for 1, the number otherwise.
func oneOr(n int) string {
	if n == 1 {
		return "one"
	}
	return fmt.Sprint(n)
}

// bookingsWord is "one booking", "2 bookings", "no booking".
func bookingsWord(n int) string {
	switch n {
	case 0:
		return "no booking"
	case 1:
		return "one booking"
	}
	return english.Plural(n, "booking", "")
}
