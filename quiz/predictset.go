package quiz

import (
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/engine"
)

// PredictSet returns the set "Predict, then run": five scenarios of sim, each
// described before it runs; the learner predicts what reaches the browser,
// the booking rows, the seats taken and which guard acts, then the
// scenario runs live on PostgreSQL and the prediction is graded from the
// run's report.
func PredictSet() Set {
	return Set{
		ID:    SetPredict,
		Title: SetTitle(SetPredict),
		Intro: "Each question describes a run. Before it plays on the real PostgreSQL, predict what reaches the browser, the booking rows, the seats taken and which guard acts; then it runs, and the run's own numbers grade you.",
		Questions: []Question{
			{
				ID:   "predict/concurrent-copies",
				Kind: KindPredict,
				Prompt: "Three copies of one request (book 2 seats, key K) reach the server at the same instant, each on its own connection. " +
					"The design is the lesson's: lock the event row, look the key up, UNIQUE (user_id, idempotency_key). Predict, then run.",
				Explain: "The copies queue on the event row's lock. The first books b1; each later copy, when its turn comes, finds b1 at its lookup and replays it, writing nothing: three 200s with one booking id, 1 row, 2 seats. The constraint never acts: the lock already made the copies wait for each other, so no INSERT races another (no 23505).",
				Source:  "Idempotency › How it works 4",
				Predict: &Predict{Scenario: "concurrent-copies", Variant: sim.Correct, Copies: 3, Slots: []Slot{
					answersSlot([]string{"200, 200, 200", "200, 409, 409", "200, 500, 500"}, []string{"3×200", "1×200 2×409", "1×200 2×500"}, 0),
					rowsSlot([]string{"1", "2", "3"}, 0),
					seatsSlot([]string{"2", "4", "6"}, 0),
					guardSlot("lookup"),
				}},
			},
			{
				ID:   "predict/key-reuse-two-events",
				Kind: KindPredict,
				Prompt: "One user sends one key for two different events (2 seats each) at the same instant. " +
					"The design is the lesson's. Predict, then run.",
				Explain: "Each request locks its own event row, so neither waits for the other, and both look the key up before either has inserted: the lookup finds nothing. The UNIQUE (user_id, idempotency_key) constraint settles it: the second INSERT fails with 23505, its whole transaction rolls back, its seats included, and the engine, reading the winner's booking for another event, answers 409 “" + engine.MsgKeyReused + "”: one 200 and one 409, 1 row, 2 seats.",
				Source:  "Interview card › The deeper answer",
				Predict: &Predict{Scenario: "key-reuse-two-events", Variant: sim.Correct, Slots: []Slot{
					answersSlot([]string{"200, 200", "200, 409", "409, 409"}, []string{"2×200", "1×200 1×409", "2×409"}, 1),
					rowsSlot([]string{"0", "1", "2"}, 1),
					seatsSlot([]string{"0", "2", "4"}, 1),
					guardSlot("violation"),
				}},
			},
			{
				ID:   "predict/retries-exhausted",
				Kind: KindPredict,
				Prompt: "The API instance has lost its database: every booking it takes fails with 500. The user books 2 seats and the browser tries as its retry rule says. " +
					"Later the database is back and the user clicks Book again; the form still holds the same key. Predict, then run.",
				Explain: "The browser retries a 5xx: 3 tries in all, after 1 s and 2 s, each answered 500, and then it gives up. A failed booking stores nothing, so when the user books again later with the same key, the lookup finds no booking for it and the booking is made once: 500, 500, 500, then 200; 1 row, 2 seats. No guard acts: nothing was there to replay.",
				Source:  "Idempotency › In learn",
				Predict: &Predict{Scenario: "retries-exhausted", Variant: sim.Correct, Slots: []Slot{
					answersSlot([]string{"three 500s, then a 200", "one 500, then a 200", "three 500s, then a 409"}, []string{"1×200 3×500", "1×200 1×500", "1×409 3×500"}, 0),
					rowsSlot([]string{"0", "1", "2"}, 1),
					seatsSlot([]string{"0", "2", "4"}, 1),
					guardSlot("none"),
				}},
			},
			{
				ID:   "predict/lookup-before-lock",
				Kind: KindPredict,
				Prompt: "A design that looks the key up before it locks the event row; the bookings table is the lesson's, its constraint included. " +
					"Two copies of one click (book 2 seats, key K) arrive at the same instant. Predict, then run.",
				Explain: "Both copies look the key up before either has inserted, so both miss it and both go on to lock, take seats and insert. The constraint stops the second INSERT with 23505; its transaction rolls back as a whole, seats included, and the engine reads the winner's booking: the same event and quantity, so it answers 200 with it. Two 200s with one booking id, 1 row, 2 seats; the constraint acted, not the lookup.",
				Source:  "Idempotency › How it works 4",
				Predict: &Predict{Scenario: "lookup-before-lock", Variant: sim.Correct, Slots: []Slot{
					answersSlot([]string{"200, 200", "200, 409", "200, 500"}, []string{"2×200", "1×200 1×409", "1×200 1×500"}, 0),
					rowsSlot([]string{"0", "1", "2"}, 1),
					seatsSlot([]string{"0", "2", "4"}, 1),
					guardSlot("violation"),
				}},
			},
			{
				ID:   "predict/last-seats",
				Kind: KindPredict,
				Prompt: "The event has exactly 2 seats left. The user books 2; the booking commits and its answer is lost on the way back. " +
					"The browser retries with the same key. The design is the lesson's. Predict, then run.",
				Explain: "The lost answer never reaches the browser; the retry does. Under the lock its lookup finds b1 for this user and key before any seat check, so it replays b1 with 200 although no seat is left: one 200, 1 row, 2 seats, found by the lookup.",
				Source:  "Idempotency › Follow-ups 1",
				Predict: &Predict{Scenario: "last-seats", Variant: sim.Correct, Slots: []Slot{
					answersSlot([]string{"200", "409", "500"}, []string{"1×200", "1×409", "1×500"}, 0),
					rowsSlot([]string{"0", "1", "2"}, 1),
					seatsSlot([]string{"0", "2", "4"}, 1),
					guardSlot("lookup"),
				}},
			},
		},
	}
}

// The slots every predict question has, in this order.
func answersSlot(choices, values []string, right int) Slot {
	return Slot{Measure: MeasureAnswers, What: "the answers that reach the browser", Choices: choices, Values: values, Right: right}
}

func rowsSlot(choices []string, right int) Slot {
	return Slot{Measure: MeasureRows, What: "booking rows afterwards", Choices: choices, Values: choices, Right: right}
}

func seatsSlot(choices []string, right int) Slot {
	return Slot{Measure: MeasureSeats, What: "seats taken", Choices: choices, Values: choices, Right: right}
}

// guardChoices are the guards a repeat may meet, as the learner reads
// them, and the values of MeasureGuard they stand for.
var (
	guardChoices = []string{"the lookup replays", "the unique violation 23505", "both the lookup and 23505", "neither guard acts"}
	guardValues  = []string{"lookup", "violation", "both", "none"}
)

// guardSlot is the slot "which guard acts", right being the value of
// MeasureGuard the run shows.
func guardSlot(right string) Slot {
	i := 0
	for guardValues[i] != right {
		i++
	}
	return Slot{Measure: MeasureGuard, What: "the guard that acts", Choices: guardChoices, Values: guardValues, Right: i}
}
