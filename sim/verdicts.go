package sim

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize/english"
)

// The diagnoses of the lesson's "Break it" table, in its order (lesson,
// "Break it"). The lesson page says the same; quiz's tests hold the two
// together.
var (
	diagNewKeyPerRetry = &Diagnosis{
		Symptom: "One click books, and charges, the user twice",
		Cause:   "The client generated a fresh key for each retry",
		Where:   "The client's key handling (sim/client.go → Client.Book)",
		Fix:     "Make one key per intent, when the user decides to book, and send it again on every retry (NewIntent)",
	}
	diagLookupAfterSeatCheck = &Diagnosis{
		Symptom: "Retrying a booking that got the last seats answers 409 “" + MsgNotEnoughSeats + "”",
		Cause:   "The key was looked up only after the seat check",
		Where:   "The order of the steps inside the transaction (sim/booking.go → Engine.BookTicket)",
		Fix:     "Look the key up first, right after locking the event row: a repeat gets the first answer, whatever has changed since",
	}
	diagKeyReusedByClient = &Diagnosis{
		Symptom: "409 “" + MsgKeyReused + "”",
		Cause:   "The client sent one key for two different bookings",
		Where:   "Create a new key for every intent (NewIntent in sim/client.go)",
		Fix:     "A changed quantity is a new intent with a new key (Intent.WithQuantity); the engine's 409 is right",
	}
)

// meanings says, for each scenario, what its runs mean: the guarantee of the
// correct design and the consequence and fault of the broken one.
var meanings = map[string]meaning{
	"lost-answer": {
		guarantee: func(r *Report) string {
			return fmt.Sprintf("one booking, %s, and the retry got the same booking back", seats(r.SeatsTaken))
		},
		consequence: chargedTimes("for one click"),
		diagnosis: &Diagnosis{
			Symptom: "One click books, and charges, the user twice",
			Cause:   "The engine never looks the key up, and no UNIQUE constraint stops the retry's INSERT",
			Where:   "sim/booking.go → Engine.BookTicket (the lookup after the row lock) and sim/schema.sql (the UNIQUE constraint)",
			Fix:     "Look the key up right after locking the event row and replay what it finds; keep UNIQUE (user_id, idempotency_key)",
		},
	},
	"concurrent-copies": {
		guarantee: func(r *Report) string {
			return fmt.Sprintf("%d copies, one booking, %s: every copy answered with the same booking", len(r.Answers), seats(r.SeatsTaken))
		},
		consequence: chargedTimes("for one click"),
		diagnosis: &Diagnosis{
			Symptom: "Simultaneous copies of one request make a booking each",
			Cause:   "Check, then insert, with no row lock and no UNIQUE constraint: every copy looks the key up before any has inserted",
			Where:   "sim/booking.go → Engine.BookTicket (SELECT … FOR UPDATE before the lookup) and sim/schema.sql",
			Fix:     "Lock the event row before looking the key up, so copies queue and the later ones replay; keep UNIQUE (user_id, idempotency_key)",
		},
	},
	"different-quantity": {
		guarantee: func(*Report) string {
			return "the key sent again for another quantity was refused: 409, nothing written"
		},
		caught: diagKeyReusedByClient,
		consequence: func(*Report) string {
			return "asked for 3 seats and silently given the first booking's 2"
		},
		diagnosis: &Diagnosis{
			Symptom: "A request for 3 seats answers 200 with a booking of 2",
			Cause:   "The engine replays whatever booking holds the key, without comparing its event and quantity with the request",
			Where:   "sim/booking.go → Engine.compare",
			Fix:     "Compare the stored event and quantity with the request: anything different is 409 “" + MsgKeyReused + "”",
		},
	},
	"last-seats": {
		guarantee: func(*Report) string {
			return "the retry got its booking back, although no seats were left"
		},
		consequence: func(*Report) string {
			return "told “" + MsgNotEnoughSeats + "” for the seats the user already has"
		},
		diagnosis: diagLookupAfterSeatCheck,
	},
	"new-key-per-retry": {
		guarantee: func(*Report) string {
			return "one key for the intent: the retry got the same booking, charged once"
		},
		consequence: chargedTimes("for one click"),
		diagnosis:   diagNewKeyPerRetry,
	},
	"key-reuse-two-events": {
		guarantee: func(r *Report) string {
			return "one booking for one key: " + refusedBy(r)
		},
		consequence: func(r *Report) string {
			return fmt.Sprintf("one key now holds %d bookings, on two events", r.BookingRows)
		},
		diagnosis: &Diagnosis{
			Symptom: "One key, sent for two events at the same instant, makes two bookings",
			Cause:   "No UNIQUE constraint on (user_id, idempotency_key): locks on two different event rows never make the two requests wait for each other",
			Where:   "sim/schema.sql (the constraint of the bookings table)",
			Fix:     "UNIQUE (user_id, idempotency_key): the second INSERT fails with 23505, its whole transaction rolls back, seats included, and it answers 409",
		},
	},
	"lookup-before-lock": {
		guarantee: func(r *Report) string {
			return "one booking: " + stoppedBy(r)
		},
		consequence: chargedTimes("for one click"),
		diagnosis: &Diagnosis{
			Symptom: "Two copies of one click, at the same instant, make two bookings",
			Cause:   "The key is looked up before the row lock, and no UNIQUE constraint stops the second INSERT",
			Where:   "sim/booking.go → Engine.BookTicket (where the lookup runs) and sim/schema.sql",
			Fix:     "Keep UNIQUE (user_id, idempotency_key), which settles what the lock does not cover, and look the key up after the lock so that copies replay",
		},
	},
	"two-users-same-key": {
		guarantee: func(*Report) string {
			return "keys are per user: each user got a booking of their own"
		},
		consequence: func(*Report) string {
			return "ben is refused with 409 for a key that only ada had used"
		},
		diagnosis: &Diagnosis{
			Symptom: "A user's first booking is refused with 409 “" + MsgKeyReused + "”",
			Cause:   "Keys are unique on their own, not per user: another user's key blocks this one",
			Where:   "sim/schema.sql (UNIQUE (idempotency_key)) and sim/booking.go → Engine.find (the lookup by key alone)",
			Fix:     "Scope the key to the user: UNIQUE (user_id, idempotency_key), and look it up with the user of the session",
		},
	},
	"replay-after-sellout": {
		guarantee: func(*Report) string {
			return "ada's retry replayed her booking although the event had sold out"
		},
	},
	"no-retry-on-4xx": {
		guarantee: func(*Report) string {
			return "a 409 is final: one try, no retry"
		},
		consequence: func(r *Report) string {
			return fmt.Sprintf("the same 409, %s: the client retried a final answer and kept the user waiting", english.Plural(len(r.Answers), "time", ""))
		},
		diagnosis: &Diagnosis{
			Symptom: "A booking that cannot succeed is sent three times, and the user waits 3 s for the same 409",
			Cause:   "The client retries 4xx answers, which are final",
			Where:   "sim/client.go → ShouldRetry",
			Fix:     "Retry only network errors and 5xx answers; a 4xx is the answer",
		},
	},
	"retries-exhausted": {
		guarantee: func(*Report) string {
			return "nothing was stored after 3 failed tries, and the same key booked once later"
		},
	},
	"crash-before-commit": {
		guarantee: func(*Report) string {
			return "the crash rolled everything back, and the retry booked once"
		},
	},
	"other-instance": {
		guarantee: func(r *Report) string {
			where := "the booking row"
			switch {
			case r.Guards.RedisHits > 0:
				where = "Redis"
			case r.Guards.StoreHits > 0:
				where = "its memory"
			case r.Guards.Lookups == 0:
				return "the same booking, charged once"
			}
			return "api-2 found the key in " + where + ": the same booking, charged once"
		},
		consequence: chargedTimes("for one click: the retry on api-2 booked again"),
		diagnosis: &Diagnosis{
			Symptom: "A retry that lands on another API instance books again",
			Cause:   "Each API instance remembers the keys in its own memory instead of the booking row",
			Where:   "sim/keys.go → MemoryKeys",
			Fix:     "Keep the key in the booking row, under UNIQUE (user_id, idempotency_key): every instance that shares the database sees it",
		},
	},
	"redis-ttl": {
		guarantee: func(*Report) string {
			return "a crash after COMMIT and a retry 25 hours later both replayed: one booking per intent"
		},
		consequence: func(r *Report) string {
			return fmt.Sprintf("%d bookings for 2 clicks: a crash between the two writes, and an expired key, each booked again", r.BookingRows)
		},
		diagnosis: &Diagnosis{
			Symptom: "Retries after a crash, or a day later, book again",
			Cause:   "Redis and PostgreSQL share no transaction, and an expired key silently drops the protection",
			Where:   "sim/keys.go → RedisKeys",
			Fix:     "Keep the key in the booking row: it commits with the booking and never expires",
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

// seats is "2 seats".
func seats(n int) string { return english.Plural(n, "seat", "") }
