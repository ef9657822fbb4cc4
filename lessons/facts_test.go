package lessons

import (
	"regexp"
	"strings"
	"testing"
)

// TestFactCoverage checks that every fact of the source pages (and every
// pointer to this project that replaced a MiniTickets one) is on the pages.
func TestFactCoverage(t *testing.T) {
	const lesson, card = "idempotency", "retry-across-instances"
	tests := []struct {
		slug, fact, pattern string
	}{
		// The lesson: the idea.
		{lesson, "answer lost, browser retries", `(?s)reply on its way.*try again`},
		{lesson, "one random key per intent", `one random key`},
		{lesson, "unique per user", `unique per user`},
		{lesson, "no seats taken twice", `no seat is ever taken twice`},
		// How it works.
		{lesson, "row lock", `SELECT … FOR UPDATE`},
		{lesson, "new key when the quantity changes", `changing the quantity makes it a new intent, with a new key`},
		{lesson, "found: write nothing", `nothing gets written`},
		{lesson, "replay is 200", `replay, answered with 200`},
		{lesson, "mismatch is 409", `409 Conflict, “This idempotency key was already used for a different booking”`},
		{lesson, "constraint", `UNIQUE \(user_id, idempotency_key\)`},
		{lesson, "unique violation", `unique violation \(SQLSTATE 23505\)`},
		{lesson, "loser rolled back, seats included", `rolled back as a whole, its seat decrement included`},
		{lesson, "key in the row", `(?s)uuid. column of the booking row.*sim/engine/schema\.sql`},
		{lesson, "transaction", "`sim/engine/booking.go` → `Engine.BookTicket`"},
		{lesson, "header and user", "`Idempotency-Key` header.*`Authorization: Bearer <token>`"},
		{lesson, "3 tries", `at most 3 tries`},
		{lesson, "backoff 1 s then 2 s", `after waiting 1 s, then one more after 2 s`},
		{lesson, "retry on network errors and 5xx", `network error or a 5xx`},
		{lesson, "never on 4xx", `never on a 4xx \(` + "`ShouldRetry`"},
		{lesson, "same key every try", "`Client.Book` sends one key on every try"},
		{lesson, "NewIntent", "`NewIntent` makes a fresh key when the quantity changes"},
		{lesson, "only mutation that retries", `single write that the client repeats on its own`},
		{lesson, "measured: 10 copies", "`learn demo concurrent-copies --copies 10`.*10 copies"},
		{lesson, "measured: 10 answers of 200, one id", `all ten come back with 200 and the same booking id`},
		{lesson, "measured: one row, 2 seats", `one row, and the event has exactly 2 seats fewer`},
		{lesson, "see it: no console", `nothing to open in a console`},
		{lesson, "see it: debug log line", `debug-level line, “replayed for a repeated idempotency key”`},
		{lesson, "see it: Play screen", `API log pane of the Play screen \(home menu “Play: the lost answer”, or ` + "`learn play lost-answer`"},
		{lesson, "see it: serve", `learn serve 2>&1 \| grep replayed`},
		// Break it.
		{lesson, "charged twice", `charges, the user twice`},
		{lesson, "Not enough seats left", `409 “Not enough seats left”`},
		// Interview answer and follow-ups.
		{lesson, "20–30 seconds", `Say it like this \(20–30 seconds\)`},
		{lesson, "replay whatever changed", `no matter what has changed`},
		{lesson, "Redis TTL", `Redis with an expiry \(TTL\)`},
		{lesson, "Redis: crash between writes", `crashes after writing to one store and before writing to the other`},
		{lesson, "Redis: eviction", `evicts a key the protection is gone`},
		{lesson, "per-user scope", `(?s)Yes\. Two different users.*identical key`},
		{lesson, "16 bytes", `about 16 bytes plus one index entry, for good`},
		{lesson, "payment API 24 hours", `payment API.*complete responses for around 24 hours`},
		// Advanced.
		{lesson, "created or existing", `just created, or did one already exist`},
		{lesson, "business rule compares event and quantity", `business rule.*comparing the event and the quantity`},
		{lesson, "failed booking stores nothing", `fails leaves no row behind`},
		{lesson, "not enough seats may change", `“Not enough seats left” can stop being true one second later`},
		// Redraw, try, read.
		{lesson, "redraw", `(?s)key K, its reply lost, the retry with that same K`},
		{lesson, "try lost-answer", "`learn demo lost-answer --json`.*`booking_rows` is 1 and `seats_taken` is 2"},
		{lesson, "try concurrent copies", "`learn demo concurrent-copies --copies 10 --json`"},
		{lesson, "mark as read", `press ` + "`m`" + ` while reading to mark this page as read`},

		// The interview card.
		{card, "20–30 seconds", `Say it like this \(20–30 seconds\)`},
		{card, "another API instance", `whichever API instance receives the retry`},
		{card, "409 on different event or quantity", `different event or quantity, the answer is 409`},
		{card, "no process memory or Redis", `process memory or on a Redis entry that may expire`},
		{card, "pre-check alone insufficient", `each find no earlier booking`},
		{card, "two events, same key, seats decremented", `same user and key but different events.*both may decrement seats`},
		{card, "23505", `unique violation \(SQLSTATE 23505\)`},
		{card, "loser rolls back then reads winner", `whole transaction rolls back, seat change included, and the engine then reads the booking the winner committed`},
		{card, "replay is 200, mismatch 409", `public API shows it \(200\); when they differ, it answers 409 Conflict`},
		{card, "replay after sell out or start", `even after the event has sold out or has already started`},
		{card, "stores bookings, not responses", `successful booking, not a copy of every HTTP response`},
		{card, "same key may try again later", `same key can be tried again later`},
		{card, "document the contract", `contract written down`},
		{card, "keys never expire", `Keys never expire.*16 bytes plus an index entry`},
		{card, "session, not body", "`Authorization: Bearer <token>`\\), never from the request body"},
		{card, "constraint includes user_id", "`user_id` is part of the unique constraint"},
		{card, "event lock for the same event", `same event, the lock on the event row`},
		{card, "constraint for a different event", `reused for a different event, the unique constraint`},
		{card, "SET NX not atomic", `Redis SET NX.*(?s:.)*cannot commit atomically`},
		{card, "false completed marker", `marker that claims a completion which never happened`},
		{card, "where in learn", "Idempotency lesson.*`sim/engine/schema.sql`.*`UNIQUE \\(user_id, idempotency_key\\)`.*`sim/engine/booking.go` → `Engine.BookTicket`"},
	}
	for _, tt := range tests {
		t.Run(tt.slug+"/"+tt.fact, func(t *testing.T) {
			p := mustGet(t, tt.slug)
			if !regexp.MustCompile(tt.pattern).MatchString(p.Markdown) {
				t.Errorf("page %s lacks %s: no match for %s", tt.slug, tt.fact, tt.pattern)
			}
		})
	}
}

// One spelling of booking ids everywhere: the screens and the API say
// "b1", so the pages never say "#b1".
func TestBookingIDsAreSpelledAsTheScreensShowThem(t *testing.T) {
	for _, p := range All() {
		if strings.Contains(p.Markdown, "#b") {
			t.Errorf("%s spells a booking id with #: the screens say b1", p.Slug)
		}
	}
}

// Expiry is taught as what it is: a documented contract, safe when keys
// outlive the client's whole retry window (the source page's payment API
// keeps responses about 24 hours; Stripe documents 24 hours), not as a
// fault of Redis, whose faults are the transaction it cannot share with the
// booking and a key evicted without a word. The lesson's two follow-ups on
// keys and the card's deeper answer and Redis counter-question say so.
func TestExpiryIsAContract(t *testing.T) {
	followUp := func(slug, question string) string {
		t.Helper()
		for _, f := range mustGet(t, slug).FollowUps {
			if strings.Contains(f.Question, question) {
				return f.Answer
			}
		}
		t.Fatalf("%s has no follow-up about %q", slug, question)
		return ""
	}
	const lesson, card = "idempotency", "retry-across-instances"
	deeper, _ := mustGet(t, card).Section("The deeper answer")
	const window = `longer than the client's whole retry window`
	tests := []struct {
		where, text string
		patterns    []string
	}{
		{"lesson, Redis follow-up", followUp(lesson, "Redis"), []string{
			`expir[^.]*contract the API documents`, window, `Stripe documents 24 hours`,
			`real faults[^.]*transaction[^.]*eviction`}},
		{"lesson, keeping keys forever", followUp(lesson, "keeping keys forever"), []string{
			`contract`, `outlive the client's whole retry window`, `Stripe`}},
		{"card, the deeper answer", deeper.Markdown, []string{`Expiring keys[^.]*contract`, window, `Stripe documents 24 hours`}},
		{"card, Redis SET NX", followUp(card, "SET NX"), []string{`evict[^.]*silently`}},
	}
	for _, tt := range tests {
		for _, p := range tt.patterns {
			if !regexp.MustCompile(p).MatchString(tt.text) {
				t.Errorf("%s: no match for %s:\n%s", tt.where, p, tt.text)
			}
		}
	}
}
