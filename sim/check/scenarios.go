package check

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/proxy"
	"github.com/learn-idempotency/learn/sim/trace"
)

// A scenario is one of the lesson's scenarios as an HTTP client can run
// it against any API: its world (the events it needs, the API instances)
// and what its browsers send through learn's proxy. lesson names the
// scenario of package sim whose words and meaning judge it.
type scenario struct {
	name, title string
	// lesson is the sim scenario whose verdict judges this one.
	lesson string
	// sends says in one line what the scenario sends.
	sends string
	// seats of the event it books (one of its own per run, when the API
	// can add events); ownEvent says it needs exactly these seats, so it
	// does not run on a shared event.
	seats    int
	ownEvent bool
	// instances is 2 for a retry that lands on another API instance.
	instances int
	// rounds is how many times a race is run, at most, to show what a
	// black box cannot be forced to show once (0: once).
	rounds int
	// takes is how many seats a round takes from an API that books
	// each intent once.
	takes int
	// power marks the check of the checker: a broken client that must
	// double-book, so that a ✓ elsewhere means something.
	power bool
	// harness marks a scenario only learn's exercise harness can run:
	// it obeys proxy.HeaderFault (Options.Harness).
	harness bool
	// refused says the scenario's request is refused on purpose: that
	// the API booked none of it is no reason not to judge it.
	refused bool
	// lost says every answer is lost on purpose: that the last try got
	// no answer is no reason not to judge it.
	lost bool
	// held, when set, is what a ✓ of this scenario says, in place of its
	// lesson's words (which tell of a retry that was answered).
	held string
	run  func(ctx context.Context, r *run) ([]client.Outcome, error)
}

// loseFirst loses the answer of try 1 of every intent. A run has one
// plan, for all its clients: the last one given to run.client.
func loseFirst(at trace.Attempt) proxy.Fault {
	if at.Try == 1 {
		return proxy.LoseAnswer
	}
	return proxy.Deliver
}

// raceRounds is how often a race is run at most. On this machine, quiet,
// a black-box race (two requests, or 10 copies) shows a missing row lock
// or constraint in 86 to 91 rounds of 100; under a load of 6 it showed in
// none of 20 rounds once, in one design of the proof's 100: 40 rounds
// keep a miss out of every run seen since, at about 1 s more per race on
// an API that holds.
const raceRounds = 40

// togetherFirst sends every first try together (last-byte sync) and
// delivers the rest.
func togetherFirst(at trace.Attempt) proxy.Fault {
	if at.Try == 1 {
		return proxy.Together
	}
	return proxy.Deliver
}

// scenarios are the check's, in the lesson's order, the check of its own
// power last.
var scenarios = []scenario{
	{
		name: "crash-before-commit", takes: 2, title: "Crash before COMMIT", lesson: "crash-before-commit", seats: 10, harness: true,
		sends: "book 2 seats; the API instance crashes at COMMIT (learn's harness drops its database connection and the client's); the client retries with the same key",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			crash := func(at trace.Attempt) proxy.Fault {
				if at.Try == 1 {
					return proxy.Crash
				}
				return proxy.Deliver
			}
			return []client.Outcome{r.client(0, crash).Book(ctx, client.NewIntent(1, r.event, 2))}, nil
		},
	},
	{
		name: "lost-answer", takes: 2, title: "The lost answer", lesson: "lost-answer", seats: 10,
		sends: "book 2 seats; the proxy delivers the request and drops the answer; the client retries with the same key",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			return []client.Outcome{r.client(0, loseFirst).Book(ctx, client.NewIntent(1, r.event, 2))}, nil
		},
	},
	{
		name: "concurrent-copies", takes: 2, title: "Simultaneous copies", lesson: "concurrent-copies", seats: 0, rounds: raceRounds, // Copies × 2
		sends: "N copies of one request (one key) at the same instant, each on its own connection, their last bytes sent together",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			r.plan = togetherFirst
			in := client.NewIntent(1, r.event, 2)
			copies := make([]client.Intent, r.copies)
			for i := range copies {
				copies[i] = in
				copies[i].Copy = i + 1
			}
			return r.together(ctx, copies), nil
		},
	},
	{
		name: "key-reuse-two-events", takes: 2, title: "One key, two events, same instant", lesson: "key-reuse-two-events", seats: 10, ownEvent: true, rounds: raceRounds,
		sends: "one key sent for two different events at the same instant: one may book, the other must be refused and write nothing",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			r.plan = togetherFirst
			other, err := r.addEvent(ctx, 10)
			if err != nil {
				return nil, err
			}
			key := uuid.New()
			return r.together(ctx, []client.Intent{
				{Number: 1, EventID: r.event, Quantity: 2, Key: key},
				{Number: 2, EventID: other, Quantity: 2, Key: key},
			}), nil
		},
	},
	{
		name: "lookup-before-lock", takes: 2, title: "Two copies at the same instant", lesson: "lookup-before-lock", seats: 10, rounds: raceRounds,
		sends: "two copies of one request at the same instant: one booking, both answered with it",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			r.plan = togetherFirst
			in := client.NewIntent(1, r.event, 2)
			copies := []client.Intent{in, in}
			copies[0].Copy, copies[1].Copy = 1, 2
			return r.together(ctx, copies), nil
		},
	},
	{
		name: "different-quantity", takes: 2, title: "Same key, other quantity", lesson: "different-quantity", seats: 10,
		sends: "book 2 seats with key K, then 3 seats with the same K: the second must be refused (409 or 422) and write nothing",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			c := r.client(0, nil)
			first := client.NewIntent(1, r.event, 2)
			o1 := c.Book(ctx, first)
			return []client.Outcome{o1, c.Book(ctx, client.Intent{Number: 2, EventID: r.event, Quantity: 3, Key: first.Key})}, nil
		},
	},
	{
		name: "different-event", takes: 2, title: "Same key, other event", lesson: "key-reuse-two-events", seats: 10, harness: true,
		sends: "book 2 seats of one event with key K, then 2 seats of another event with the same K: the second must be refused (409 or 422) and write nothing",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			other, err := r.addEvent(ctx, 10)
			if err != nil {
				return nil, err
			}
			c := r.client(0, nil)
			first := client.NewIntent(1, r.event, 2)
			o1 := c.Book(ctx, first)
			return []client.Outcome{o1, c.Book(ctx, client.Intent{Number: 2, EventID: other, Quantity: 2, Key: first.Key})}, nil
		},
	},
	{
		name: "last-seats", takes: 2, title: "The last seats", lesson: "last-seats", seats: 2, ownEvent: true,
		sends: "book the event's last 2 seats; the answer is lost; the retry must get the booking back, not a refusal",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			return []client.Outcome{r.client(0, loseFirst).Book(ctx, client.NewIntent(1, r.event, 2))}, nil
		},
	},
	{
		name: "replay-after-sellout", takes: 4, title: "Replay after sell-out", lesson: "replay-after-sellout", seats: 4, ownEvent: true,
		sends: "the first user's answer is lost; while they wait, the second user books the last 2 seats; the retry must still get its booking",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			var other client.Outcome
			first := r.client(0, func(at trace.Attempt) proxy.Fault {
				if at.Intent == 1 && at.Try == 1 {
					return proxy.LoseAnswer
				}
				return proxy.Deliver
			})
			first.Meanwhile = func(ctx context.Context, at trace.Attempt) error {
				if at.Try == 1 {
					other = r.client(1, nil).Book(ctx, client.NewIntent(2, r.event, 2))
				}
				return nil
			}
			o := first.Book(ctx, client.NewIntent(1, r.event, 2))
			return []client.Outcome{o, other}, nil
		},
	},
	{
		name: "two-users-same-key", takes: 4, title: "Two users, same key", lesson: "two-users-same-key", seats: 10,
		sends: "two users send the same key: each must get a booking of their own, never the other's",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			key := uuid.New()
			a := r.client(0, nil).Book(ctx, client.Intent{Number: 1, EventID: r.event, Quantity: 2, Key: key})
			b := r.client(1, nil).Book(ctx, client.Intent{Number: 2, EventID: r.event, Quantity: 2, Key: key})
			return []client.Outcome{a, b}, nil
		},
	},
	{
		name: "server-error", takes: 2, title: "A 5xx after the booking, then a retry", lesson: "lost-answer", seats: 10,
		sends: "book 2 seats; the API acts, and the proxy answers 502 in its place; the client retries with the same key",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			plan := func(at trace.Attempt) proxy.Fault {
				if at.Try == 1 {
					return proxy.GatewayError
				}
				return proxy.Deliver
			}
			return []client.Outcome{r.client(0, plan).Book(ctx, client.NewIntent(1, r.event, 2))}, nil
		},
	},
	{
		name: "other-instance", takes: 2, title: "The retry lands on another API instance", lesson: "other-instance", seats: 10, instances: 2,
		sends: "book 2 seats on the first base URL; the answer is lost; the retry goes to the second",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			c := r.client(0, loseFirst)
			in := client.NewIntent(1, r.event, 2)
			c.Meanwhile = func(ctx context.Context, at trace.Attempt) error {
				if at.Try == 1 {
					r.apart, r.unverified = r.sharedState(ctx, in)
				}
				return nil
			}
			return []client.Outcome{c.Book(ctx, in)}, nil
		},
	},
	{
		name: "client-lost-answer", takes: 2, title: "Your client: the lost answer", lesson: "lost-answer", seats: 10, harness: true,
		sends: "your Book books 2 seats; the proxy delivers its first try and drops the answer: it must retry with the same key",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			o, err := r.learnerBook(ctx, 0, 2, loseFirst)
			return []client.Outcome{o}, err
		},
	},
	{
		name: "client-server-error", takes: 2, title: "Your client: a 502 after the booking", lesson: "lost-answer", seats: 10, harness: true,
		sends: "your Book books 2 seats; the API acts and the proxy answers 502 in its place: it must retry (a 5xx), with the same key",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			o, err := r.learnerBook(ctx, 0, 2, func(at trace.Attempt) proxy.Fault {
				if at.Try == 1 {
					return proxy.GatewayError
				}
				return proxy.Deliver
			})
			return []client.Outcome{o}, err
		},
	},
	{
		name: "client-refusal", takes: 0, title: "Your client: a refusal is final", lesson: "no-retry-on-4xx", seats: 1, ownEvent: true, harness: true, refused: true,
		sends: "your Book asks for 2 seats of an event with 1 left: the API refuses with 409, which it must not send again",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			o, err := r.learnerBook(ctx, 0, 2, nil)
			return []client.Outcome{o}, err
		},
	},
	{
		name: "client-gives-up", takes: 2, title: "Your client: at most 3 tries", lesson: "lost-answer", seats: 10, harness: true, lost: true,
		held:  "3 tries with one key, and then it gave up: one booking, no try past the third",
		sends: "your Book books 2 seats; the proxy drops the answer of every try: it must try 3 times, with one key, and then give up",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			o, err := r.learnerBook(ctx, 0, 2, func(trace.Attempt) proxy.Fault { return proxy.LoseAnswer })
			return []client.Outcome{o}, err
		},
	},
	{
		name: "new-key-per-retry", takes: 4, title: "The check's power: a new key per try", lesson: "new-key-per-retry", seats: 10, power: true,
		sends: "a broken client that makes a new key for its retry after a lost answer: it must book twice, or the check cannot see a double booking",
		run: func(ctx context.Context, r *run) ([]client.Outcome, error) {
			c := r.client(0, loseFirst)
			c.NewKeyPerTry = true
			return []client.Outcome{c.Book(ctx, client.NewIntent(1, r.event, 2))}, nil
		},
	},
}

// Names are the check's scenarios, in order: those any API can run.
func Names() []string {
	var out []string
	for _, s := range scenarios {
		if !s.harness {
			out = append(out, s.name)
		}
	}
	return out
}

// HarnessNames are the scenarios only learn's exercise harness can run
// (Options.Harness), in order.
func HarnessNames() []string {
	var out []string
	for _, s := range scenarios {
		if s.harness {
			out = append(out, s.name)
		}
	}
	return out
}

// lookup finds the check's scenario called name; one for learn's
// exercise harness only with harness.
func lookup(name string, harness bool) (scenario, error) {
	for _, s := range scenarios {
		if s.name == name && (harness || !s.harness) {
			return s, nil
		}
	}
	return scenario{}, fmt.Errorf("learn check has no scenario %q; its scenarios are %v", name, Names())
}
