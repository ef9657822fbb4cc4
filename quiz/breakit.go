package quiz

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize/english"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/engine"
)

// livePrompt ends the prompt of every live question.
const livePrompt = " Run it, read the numbers, then say what causes it and where you would look."

// breakRows are the lesson's Break it rows, in table order, with a word
// each must contain: quiz relies on which symptom is which.
var breakRows = []struct{ id, mustContain string }{
	{"breakit/charged-twice", "twice"},
	{"breakit/last-seats", engine.MsgNotEnoughSeats},
	{"breakit/key-already-used", engine.MsgKeyReused},
}

func buildBreakIt() (Set, error) {
	lesson, _, err := pages()
	if err != nil {
		return Set{}, err
	}
	return breakItFrom(lesson)
}

// breakItFrom builds the Break it set from the lesson page.
func breakItFrom(lesson *lessons.Page) (Set, error) {
	rows := lesson.BreakIt
	if len(rows) != len(breakRows) {
		return Set{}, shapeError(lesson, "Break it has %s, quiz has questions for %d", english.Plural(len(rows), "row", ""), len(breakRows))
	}
	type row struct{ symptom string }
	r := make([]row, len(rows))
	for i, br := range rows {
		r[i] = row{plain(br.Symptom)}
		if !strings.Contains(r[i].symptom, breakRows[i].mustContain) {
			return Set{}, shapeError(lesson, "Break it row %d (%q) should be the symptom with %q", i+1, r[i].symptom, breakRows[i].mustContain)
		}
	}
	tableSource := func(i int) string { return fmt.Sprintf("%s › Break it %d", lesson.Title, i+1) }
	const cardName = "Interview card"
	// The causes are quiz's own words for the diagnoses of sim's verdicts
	// (learn demo and the play screen show those), put so that the right
	// one neither stands out by length nor repeats the prompt; the places
	// are the one pool of Places. A test holds each to its verdict.

	qs := []Question{
		{
			ID:     breakRows[0].id,
			Kind:   KindLive,
			Prompt: r[0].symptom + "." + livePrompt,
			Choices: []string{
				"The key was looked up only after the seat check",
				"The client generated a fresh key for each retry",
				"The bookings table has no UNIQUE (user_id, idempotency_key)",
				"The lossy network delivered the same request twice",
			},
			Correct: []int{1},
			Explain: "The answer to the first try was lost after COMMIT, and the retry carried a key the server had never seen, so it was a new booking: one click, two keys, 2 rows and 4 seats. The key belongs to the intent: made once, when the user decides to book, and sent again on every try.",
			Source:  tableSource(0),
			Live: &Live{
				Scenario:     "new-key-per-retry",
				Variant:      sim.Broken,
				Beside:       sim.Correct,
				BesideNote:   "The correct client sends the same key on the retry, which gets the first booking back as a replay: 1 row, 2 seats.",
				Symptom:      r[0].symptom,
				Where:        placeTexts(),
				WhereCorrect: placeClientKey,
				Claim: Claim{
					Statuses: []int{200}, Lost: 1, Intents: 1, Keys: 2, Tries: 2, Rows: 2, Seats: 4,
					Broken: []string{sim.InvOneBookingPerIntent, sim.InvIntentGetsItsBook},
				},
			},
		},
		{
			ID:     breakRows[1].id,
			Kind:   KindLive,
			Prompt: r[1].symptom + "." + livePrompt,
			Choices: []string{
				"Another user took the last seats while the answer was lost",
				"The client retried a 4xx answer, which is final and comes back again",
				"The key was looked up only after the seat check",
				"The row lock made the retry wait until the seats had gone",
			},
			Correct: []int{2},
			Explain: "The first try took the last 2 seats and its answer was lost. The retry, with the same key, met the seat check before the key lookup and was refused for seats the user already has. Look the key up first, right after locking the event row: a repeat must get the first answer, whatever has changed since.",
			Source:  tableSource(1),
			Live: &Live{
				Scenario:     "last-seats",
				Variant:      sim.Broken,
				Beside:       sim.Correct,
				BesideNote:   "In the correct order the lookup finds the key before the seat check and replays 200 with the first booking.",
				Symptom:      r[1].symptom,
				Where:        placeTexts(),
				WhereCorrect: placeStepOrder,
				Claim: Claim{
					Statuses: []int{409}, Messages: []string{engine.NotEnoughSeats(0, 2)}, Lost: 1, Intents: 1, Keys: 1, Tries: 2, Rows: 1, Seats: 2,
					Broken: []string{sim.InvIntentGetsItsBook},
				},
			},
		},
		{
			ID:     breakRows[2].id,
			Kind:   KindLive,
			Prompt: r[2].symptom + "." + livePrompt,
			Choices: []string{
				"The engine took the retry of a lost answer for a new booking",
				"Two users happened to send the same key at the same time",
				"The event sold out between the first request and the second",
				"The client kept the key after the user changed the quantity",
			},
			Correct: []int{3},
			Explain: "Two intents, one key: the client booked 2 seats, then sent the same key for 3. The server is right to refuse: the same key with another quantity gets 409 and nothing is written. The fix is in the client: a changed quantity is a new intent with a new key (NewIntent, Intent.WithQuantity).",
			Source:  tableSource(2),
			Live: &Live{
				Scenario: "different-quantity",
				// The correct engine gives the lesson's symptom: the bug
				// is the client's, and the 409 is the engine doing its
				// job. The broken engine (no comparison) answers 200.
				Variant:      sim.Correct,
				Beside:       sim.Broken,
				BesideNote:   "An engine without the comparison answers 200 with the first booking's 2 seats to a request for 3: a wrong answer that looks like success. The 409 is the safe outcome; the client must stop reusing the key.",
				Symptom:      r[2].symptom,
				Where:        placeTexts(),
				WhereCorrect: placeClientKey,
				Claim: Claim{
					Statuses: []int{200, 409}, Messages: []string{engine.MsgKeyReused}, Lost: 0, Intents: 2, Keys: 1, Tries: 2, Rows: 1, Seats: 2,
				},
			},
		},
		{
			ID:     "breakit/other-instance",
			Kind:   KindLive,
			Prompt: "Two API instances sit behind a round-robin picker. A booking's answer is lost, the retry with the same key lands on the other instance, and the user has two bookings for one click." + livePrompt,
			Choices: []string{
				"The client generated a fresh key for each of its retries",
				"The keys lived in each process's memory, not in the database",
				"The key was looked up only after the seat check",
				"The round-robin picker sent both tries to the same instance",
			},
			Correct: []int{1},
			Explain: "The keys lived in each instance's memory. api-2 had never seen the key, so the retry booked again: one key, 2 rows. Kept in the booking row under UNIQUE (user_id, idempotency_key), the key is seen by every instance that shares the database, and it commits with the booking; even with the keys in memory, that constraint behind them would have stopped api-2's INSERT (23505), so the schema is as right a place to look as the key store.",
			Source:  cardName + " › Say it in 30 seconds",
			Live: &Live{
				Scenario:     "other-instance",
				Variant:      sim.Broken,
				Beside:       sim.Correct,
				BesideNote:   "With the key in the booking row, api-2 finds it and replays the first booking: 1 row, 2 seats.",
				Symptom:      "The retry landed on another API instance, and one click made two bookings.",
				Where:        placeTexts(),
				WhereCorrect: placeKeyStore,
				WhereAlso:    []int{placeSchema},
				Claim: Claim{
					Statuses: []int{200}, Lost: 1, Intents: 1, Keys: 1, Tries: 2, Rows: 2, Seats: 4,
					Broken: []string{sim.InvOnePerKey, sim.InvOneBookingPerIntent, sim.InvIntentGetsItsBook},
				},
			},
		},
		{
			ID:     "breakit/redis-ttl",
			Kind:   KindLive,
			Prompt: "The API keeps idempotency keys in Redis with a 24-hour TTL. One booking's API instance crashes right after COMMIT; another booking's answer is lost and its retry goes out 25 hours later. Both end up booked twice." + livePrompt,
			Choices: []string{
				"The TTL was too short: a longer one would have kept both safe",
				"Redis lost the keys when the API instance crashed",
				"No transaction spans the two stores, and a stored entry can expire",
				"The retries landed on another API instance that did not know the keys",
			},
			Correct: []int{2},
			Explain: "Two failures of one design. The crash came after COMMIT and before the Redis write, so the retry found no key and booked again; and the other key had expired after 24 hours, so its late retry booked again too: 4 rows for 2 intents. A longer TTL would not fix the crash. In the booking row the key commits with the booking and never expires, and a UNIQUE (user_id, idempotency_key) behind Redis would have stopped both second INSERTs: the schema is as right a place to look as the key store.",
			Source:  lesson.Title + " › Follow-ups 2",
			Live: &Live{
				Scenario:     "redis-ttl",
				Variant:      sim.Broken,
				Beside:       sim.Correct,
				BesideNote:   "With the key in the booking row both retries replay: 2 rows for 2 intents.",
				Symptom:      "Keys kept in Redis with a TTL: a crash after COMMIT, and a retry a day later, each booked twice.",
				Where:        placeTexts(),
				WhereCorrect: placeKeyStore,
				WhereAlso:    []int{placeSchema},
				Claim: Claim{
					Statuses: []int{200, 200}, Lost: 1, Intents: 2, Keys: 2, Tries: 4, Rows: 4, Seats: 8,
					Broken: []string{sim.InvOnePerKey, sim.InvOneBookingPerIntent, sim.InvIntentGetsItsBook},
				},
			},
		},
		{
			ID:     "breakit/two-events-one-key",
			Kind:   KindLive,
			Prompt: "A client sends one key for two different events at the same instant, and both requests pass the key lookup. Afterwards two bookings carry the same user and key." + livePrompt,
			Choices: []string{
				"The event row was not locked with FOR UPDATE before the lookup",
				"The key was looked up only after the seat check, not before it",
				"The table has no UNIQUE constraint over (user_id, idempotency_key)",
				"Engine.Compare let the other event through as a new booking",
			},
			Correct: []int{2},
			Explain: "Both requests looked before either had inserted, and locks on two different event rows do not make them wait for each other. Only the UNIQUE (user_id, idempotency_key) constraint can stop the second INSERT. With it, one INSERT fails with a unique violation (SQLSTATE 23505), its whole transaction rolls back, seats included, and it answers 409.",
			Source:  cardName + " › The deeper answer",
			Live: &Live{
				Scenario:     "key-reuse-two-events",
				Variant:      sim.Broken,
				Beside:       sim.Correct,
				BesideNote:   "With the constraint, the loser's INSERT fails with 23505, its transaction rolls back with its seat change, and it answers 409 “" + engine.MsgKeyReused + "”: 1 row, 2 seats.",
				Symptom:      "One key, two events, the same instant: two bookings for one (user, key).",
				Where:        placeTexts(),
				WhereCorrect: placeSchema,
				Claim: Claim{
					Statuses: []int{200, 200}, Lost: 0, Intents: 2, Keys: 1, Tries: 2, Rows: 2, Seats: 4,
					Broken: []string{sim.InvOnePerKey},
				},
			},
		},
	}
	return Set{
		ID:        SetBreakIt,
		Title:     SetTitle(SetBreakIt),
		Intro:     "Each question plays a symptom on the real PostgreSQL and shows, in numbers, what the browser and the tables got. Find the cause and where to look; then the other design runs beside it.",
		Questions: qs,
	}, nil
}
