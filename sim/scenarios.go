package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dustin/go-humanize/english"
	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// scenarios is the catalogue, in the order of the lesson and design.md.
var scenarios = []*Scenario{
	{
		Name:    "lost-answer",
		Title:   "The lost answer",
		Summary: "book 2 seats with key K, the answer is lost after COMMIT, the retry with K gets the same booking back: 1 row, 2 seats",
		Broken:  "the key is never looked up (and not unique): the retry books again, 2 rows, 4 seats",
		world:   func(Options) Setup { return Setup{Seats: 10} },
		broken:  &Switches{Lookup: engine.NoLookup, Constraint: engine.NoUnique},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			in := client.NewIntent(1, r.EventID(), 2)
			return []client.Outcome{r.browser(api.TokenAda, loseFirst()).Book(ctx, in)}, nil
		},
	},
	{
		Name:    "concurrent-copies",
		Title:   "Simultaneous copies",
		Summary: "N copies of one request at the same instant, each on its own connection: N answers of 200, one booking id, 1 row, 2 seats",
		Broken:  "check then insert with no row lock and no UNIQUE: every copy looks up the key before any inserts, N rows",
		Copies:  true,
		world: func(o Options) Setup {
			return Setup{Seats: 2 * o.Copies, Copies: o.Copies, HoldAfterLookup: o.Copies}
		},
		broken: &Switches{NoLock: true, Constraint: engine.NoUnique},
		run:    sendCopies,
	},
	{
		Name:    "different-quantity",
		Title:   "Same key, other quantity",
		Summary: "the client reuses key K for 3 seats after booking 2: 409 \"" + engine.MsgKeyReused + "\", 1 row",
		Broken:  "no comparison of event and quantity: 200 with the first booking's 2 seats for a request of 3 (wrong)",
		world:   func(Options) Setup { return Setup{Seats: 10} },
		broken:  &Switches{Compare: engine.NoCompare},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			first := client.NewIntent(1, r.EventID(), 2)
			c := r.browser(api.TokenAda, nil)
			o1 := c.Book(ctx, first)
			reused := client.Intent{Number: 2, EventID: first.EventID, Quantity: 3, Key: first.Key} // the client's bug
			return []client.Outcome{o1, c.Book(ctx, reused)}, nil
		},
	},
	{
		Name:    "last-seats",
		Title:   "The last seats",
		Summary: "the event has exactly the 2 seats booked; the answer is lost; the retry finds the key first and replays 200",
		Broken:  "the key is looked up after the seat check: the retry gets \"" + engine.MsgNotEnoughSeats + "\" for a booking the user has",
		world:   func(Options) Setup { return Setup{Seats: 2} },
		broken:  &Switches{Lookup: engine.LookupAfterSeatCheck},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			in := client.NewIntent(1, r.EventID(), 2)
			return []client.Outcome{r.browser(api.TokenAda, loseFirst()).Book(ctx, in)}, nil
		},
	},
	{
		Name:    "new-key-per-retry",
		Title:   "A new key per retry",
		Summary: "one key per intent, reused by the retry after a lost answer: 1 row, 2 seats",
		Broken:  "the client makes a new key for every try: the retry is a new booking, 2 rows, 4 seats (charged twice)",
		world:   func(Options) Setup { return Setup{Seats: 10} },
		broken:  &Switches{KeyPerRetry: true},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			in := client.NewIntent(1, r.EventID(), 2)
			return []client.Outcome{r.browser(api.TokenAda, loseFirst()).Book(ctx, in)}, nil
		},
	},
	{
		Name:    "key-reuse-two-events",
		Title:   "One key, two events, same instant",
		Summary: "both requests pass the lookup; the UNIQUE constraint rejects one INSERT (23505), its whole transaction rolls back, its event keeps its seats, it answers 409",
		Broken:  "no UNIQUE constraint: both INSERTs succeed, 2 rows for one key",
		world:   func(Options) Setup { return Setup{Seats: 10, Events: 2, HoldAfterLookup: 2} },
		broken:  &Switches{Constraint: engine.NoUnique},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			key := uuid.New()
			intents := []client.Intent{
				{Number: 1, EventID: r.EventIDs[0], Quantity: 2, Key: key},
				{Number: 2, EventID: r.EventIDs[1], Quantity: 2, Key: key},
			}
			return r.together(ctx, []string{api.TokenAda}, intents), nil
		},
	},
	{
		Name:    "lookup-before-lock",
		Title:   "The constraint settles what the lock missed",
		Summary: "a design that looks the key up before locking the event row: two copies both miss it and both insert; the UNIQUE constraint rejects the second INSERT (23505), its whole transaction rolls back, seats included, and it answers with the winner's booking: 2 × 200, 1 row",
		Broken:  "the same lookup before the lock, without the UNIQUE constraint: both copies insert, 2 rows, 4 seats for one click",
		world:   func(Options) Setup { return Setup{Seats: 10, Copies: 2, HoldAfterLookup: 2} },
		correct: Switches{Lookup: engine.LookupBeforeLock},
		broken:  &Switches{Lookup: engine.LookupBeforeLock, Constraint: engine.NoUnique},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			in := client.NewIntent(1, r.EventID(), 2)
			copies := []client.Intent{in, in}
			for i := range copies {
				copies[i].Copy = i + 1
			}
			return r.together(ctx, []string{api.TokenAda}, copies), nil
		},
	},
	{
		Name:    "two-users-same-key",
		Title:   "Two users, same key",
		Summary: "two users happen to send the same key: keys are per user, so two bookings, both 200, each user answered with their own",
		Broken:  "keys unique on their own, looked up by key alone, the user left out of the comparison: ben gets ada's booking (a leak)",
		world:   func(Options) Setup { return Setup{Seats: 10} },
		broken:  &Switches{Constraint: engine.UniqueKeyOnly, Compare: engine.CompareEventQuantity},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			key := uuid.New()
			ada := r.browser(api.TokenAda, nil).Book(ctx, client.Intent{Number: 1, EventID: r.EventID(), Quantity: 2, Key: key})
			ben := r.browser(api.TokenBen, nil).Book(ctx, client.Intent{Number: 2, EventID: r.EventID(), Quantity: 2, Key: key})
			return []client.Outcome{ada, ben}, nil
		},
	},
	{
		Name:    "replay-after-sellout",
		Title:   "Replay after sell-out",
		Summary: "ada's answer is lost; while she waits, ben takes the last seats; her retry still replays 200",
		world:   func(Options) Setup { return Setup{Seats: 4} },
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			var ben client.Outcome
			ada := r.browser(api.TokenAda, loseFirst(1))
			ada.Meanwhile = func(ctx context.Context, at trace.Attempt) error {
				if at.Try != 1 {
					return nil
				}
				if err := r.note(ctx, trace.LaneBrowser, "meanwhile: ben books 2", "meanwhile ben books the last 2 seats: the event is sold out"); err != nil {
					return err
				}
				ben = r.browser(api.TokenBen, nil).Book(ctx, client.NewIntent(2, r.EventID(), 2))
				return nil
			}
			o := ada.Book(ctx, client.NewIntent(1, r.EventID(), 2))
			return []client.Outcome{o, ben}, nil
		},
	},
	{
		Name:    "no-retry-on-4xx",
		Title:   "4xx is never retried",
		Summary: "a 409 (not enough seats) is final: the browser tries once",
		Broken:  "the client retries 4xx too: three identical 409s after 1 s and 2 s",
		world:   func(Options) Setup { return Setup{Seats: 1} },
		broken:  &Switches{Retry: RetryAlso4xx},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			return []client.Outcome{r.browser(api.TokenAda, nil).Book(ctx, client.NewIntent(1, r.EventID(), 2))}, nil
		},
	},
	{
		Name:    "retries-exhausted",
		Title:   "Retries exhausted",
		Summary: "the API answers 500 on every try: the browser gives up after 1 s + 2 s, nothing is stored; later the same key books once",
		world:   func(Options) Setup { return Setup{Seats: 10} },
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			restore, err := r.Stage.CutDatabase(ctx, 1)
			if err != nil {
				return nil, err
			}
			if err := r.note(ctx, trace.LaneAPI(1), "api-1 loses its database",
				"api-1 has lost its database (learn closed its connection pool, as a failed database would leave it): every booking fails with 500"); err != nil {
				return nil, err
			}
			in := client.NewIntent(1, r.EventID(), 2)
			first := r.browser(api.TokenAda, nil).Book(ctx, in)
			restore()
			if err := r.note(ctx, trace.LaneBrowser, "later: same key again", "later the database is back and the user clicks Book again: the form still holds key "+trace.ShortKey(in.Key)); err != nil {
				return nil, err
			}
			again := in
			again.Number = 2
			return []client.Outcome{first, r.browser(api.TokenAda, nil).Book(ctx, again)}, nil
		},
	},
	{
		Name:    "crash-before-commit",
		Title:   "Crash before COMMIT",
		Summary: "the API instance dies before COMMIT: PostgreSQL rolls back, no answer comes, the retry books once",
		world:   func(Options) Setup { return Setup{Seats: 10} },
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			r.Stage.Instances[0].API.Engine.At = crashAt(engine.PointBeforeCommit, 1)
			ada := r.browser(api.TokenAda, nil)
			ada.Meanwhile = func(ctx context.Context, at trace.Attempt) error {
				if at.Try != 1 {
					return nil
				}
				// The retry's booking is b2, not b1: say why where it happens.
				return r.note(ctx, trace.LanePostgres, "id 1 is spent",
					"b1 is gone for good: the rolled-back INSERT had taken id 1 from the bookings sequence, and a sequence never hands an id out twice, so the retry's booking will be b2")
			}
			return []client.Outcome{ada.Book(ctx, client.NewIntent(1, r.EventID(), 2))}, nil
		},
	},
	{
		Name:    "other-instance",
		Title:   "The retry lands on another API instance",
		Summary: "two API instances, each with its own pool: the answer from api-1 is lost, the retry lands on api-2, which finds the key in the row",
		Broken:  "keys in each instance's memory instead of the row, no UNIQUE behind them: the second instance has never seen the key, 2 rows",
		world:   func(Options) Setup { return Setup{Seats: 10, Instances: 2} },
		broken:  &Switches{Store: KeysInMemory, Constraint: engine.NoUnique},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			return []client.Outcome{r.browser(api.TokenAda, loseFirst()).Book(ctx, client.NewIntent(1, r.EventID(), 2))}, nil
		},
	},
	{
		Name:    "redis-ttl",
		Title:   "Keys in Redis with a TTL",
		Summary: "the key lives in the booking row: a crash after COMMIT and a retry 25 hours later both replay, 1 row per intent",
		Broken:  "keys only in Redis (24 h TTL), no UNIQUE in the row: a crash before the SET, and a retry 25 h later, each book twice",
		world:   func(Options) Setup { return Setup{Seats: 10} },
		broken:  &Switches{Store: KeysInRedis, Constraint: engine.NoUnique},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			if r.Stage.Redis != nil {
				if err := r.note(ctx, trace.LaneRedis, "in-process Redis",
					"the Redis here is a server inside learn that speaks the Redis protocol on a loopback port (GET and SET with a TTL, all the API asks of it): the API instance talks to it as to any Redis, and its keys expire by the run's clock"); err != nil {
					return nil, err
				}
			}
			// Intent 1: the instance dies right after COMMIT, before it
			// could answer (or, in the broken design, write Redis).
			r.Stage.Instances[0].API.Engine.At = crashAt(engine.PointAfterCommit, 1)
			crash := r.browser(api.TokenAda, nil).Book(ctx, client.NewIntent(1, r.EventID(), 2))
			// Intent 2: the answer is lost and the retry goes out a day later.
			late := r.browser(api.TokenAda, loseFirst(2))
			r.sleepsBeforeRetry(late)
			return []client.Outcome{crash, late.Book(ctx, client.NewIntent(2, r.EventID(), 2))}, nil
		},
	},
	{
		Name:    "copies-repeatable-read",
		Title:   "Copies at REPEATABLE READ",
		Summary: "N copies of one request at the same instant, the transaction at REPEATABLE READ, the database's default here: each copy that waited for the row lock fails with 40001, and the engine runs its whole transaction again in a new snapshot, which sees the booking: N answers of 200, one booking id, 1 row (the lesson's design begins READ COMMITTED itself and meets no 40001)",
		Broken:  "the 40001 taken for an error like any other: each copy that waited for the row lock is answered 500; only the client's retry gets the booking",
		Copies:  true,
		world: func(o Options) Setup {
			return Setup{Seats: 2 * o.Copies, Copies: o.Copies, HoldAfterLookup: o.Copies, DatabaseIsolation: engine.RepeatableRead}
		},
		correct: Switches{Isolation: engine.RepeatableRead},
		broken:  &Switches{Isolation: engine.RepeatableRead, On40001: engine.Answer500},
		run:     sendCopies,
	},
	{
		Name:    "page-reload",
		Title:   "The page reloaded",
		Summary: "the answer is lost, and the user reloads the page while it waits to retry; the page saved key K before it sent the request, so the page drawn again retries with K: the same booking comes back, 1 row",
		Broken:  "the key kept in the page's memory only: the reload loses it, the page drawn again makes a new key, and the retry books again: 2 rows for one click",
		world:   func(Options) Setup { return Setup{Seats: 10} },
		broken:  &Switches{KeyInMemory: true},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			c := r.browser(api.TokenAda, loseFirst())
			c.ReloadAfter = 1
			return []client.Outcome{c.Book(ctx, client.NewIntent(1, r.EventID(), 2))}, nil
		},
	},
	{
		Name:    "request-in-flight",
		Title:   "A request still in flight",
		Summary: fmt.Sprintf("a double click: copy 1 is slow, held before COMMIT, when copy 2 arrives with the same key; the transaction's first statement takes a lock on the key itself, so copy 2 is answered at once 409 %s with Retry-After, holding nothing, and its retry, which the client makes by the error code, gets the booking as a replay: 1 row (under the lesson's design, in-flight=wait, copy 2 queues for the row lock instead, up to the engine's bound, %s here, 5 s in learn serve, then 503 event_busy, and the retry replays)", engine.CodeInProgress, inFlightLockWait),
		Broken:  fmt.Sprintf("a client that reads the status alone takes the 409 %s for a final refusal: the page tells the user the booking failed, and copy 1 booked it", engine.CodeInProgress),
		world:   func(Options) Setup { return Setup{Seats: 10, LockWait: inFlightLockWait} },
		correct: Switches{InFlight: engine.Answer409},
		broken:  &Switches{InFlight: engine.Answer409, Retry: RetryStatusOnly},
		run:     slowFirstCopy,
	},
	{
		Name:    "late-retry",
		Title:   "A retry 25 hours late",
		Summary: "the answer is lost and the retry goes out 25 hours later (a laptop that slept); the key lives in the booking row as long as the booking, so the retry finds it and gets the same booking back: 1 row",
		Broken:  "keys expire from their rows after 24 hours (a sweeper clears them): the retry 25 hours later finds no key and books again, 2 rows for one click; an expiry is a sound contract only when it is longer than every retry a client sends",
		world:   func(Options) Setup { return Setup{Seats: 10} },
		broken:  &Switches{Expiry: Expire24h},
		run: func(ctx context.Context, r *Run) ([]client.Outcome, error) {
			c := r.browser(api.TokenAda, loseFirst())
			r.sleepsBeforeRetry(c)
			return []client.Outcome{c.Book(ctx, client.NewIntent(1, r.EventID(), 2))}, nil
		},
	},
	{
		Name:    "retry-storm",
		Title:   "A retry storm",
		Summary: fmt.Sprintf("%d booking requests are sent at the same instant, ada's and ben's, each for a show of its own, while a slow batch (the box office's price update) holds every show's row lock; each waits for it up to the engine's bound (%s here) and is answered 503 event_busy; each retries after its backoff and books: %d rows. With the lesson's fixed backoff the retries come as one spike, all in the same 100 ms; backoff=jitter spreads them", stormClients, inFlightLockWait, stormClients),
		Broken:  "no backoff: every client retries the instant its 503 arrives, a retry storm against an API that is already struggling",
		world:   func(Options) Setup { return Setup{Seats: 2, Events: stormClients, LockWait: inFlightLockWait} },
		broken:  &Switches{Backoff: NoBackoff},
		run:     retryStorm,
	},
}

// stormClients is how many users retry-storm has book at once.
const stormClients = 8

// retryStorm books one seat for each of stormClients users at the same
// instant, each of an event of its own, while a transaction of the
// world's holds every event's row lock, until every first try has its
// answer; each client's retry waits for that, so that every retry meets
// its lock free, and no retry waits for another's (a step held for a
// viewer would make it wait past the bound).
func retryStorm(ctx context.Context, r *Run) ([]client.Outcome, error) {
	tx, err := r.Stage.Admin.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM events WHERE id = ANY($1) FOR UPDATE`, r.EventIDs); err != nil {
		return nil, fmt.Errorf("hold the events' row locks: %w", err)
	}
	if err := r.note(ctx, trace.LanePostgres, "a slow batch holds every show",
		"a slow batch (the box office's price update, say) holds every show's row lock until every user's first try has its answer"); err != nil {
		return nil, err
	}
	release := make(chan struct{})
	var mu sync.Mutex
	first, freed := 0, error(nil)
	clients := make([]*client.Client, stormClients)
	intents := make([]client.Intent, stormClients)
	for i := range clients {
		c := r.browser([]string{api.TokenAda, api.TokenBen}[i%2], nil)
		answered, meanwhile := c.Answered, c.Meanwhile
		c.Answered = func(in client.Intent, t client.TryResult) {
			answered(in, t)
			if t.Try != 1 {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if first++; first == stormClients {
				freed = tx.Commit(ctx)
				close(release)
			}
		}
		c.Meanwhile = func(ctx context.Context, at trace.Attempt) error {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
			return meanwhile(ctx, at)
		}
		clients[i], intents[i] = c, client.NewIntent(i+1, r.EventIDs[i], 1)
	}
	outs := client.BookTogether(ctx, clients, intents)
	if freed != nil {
		return nil, fmt.Errorf("end the slow booking: %w", freed)
	}
	return outs, nil
}

// inFlightLockWait is the bound on a wait for the row lock in
// request-in-flight's world: short, as the run waits it in real time.
const inFlightLockWait = 200 * time.Millisecond

// slowFirstCopy sends two copies of one intent, a double click: copy 1
// first, held before its COMMIT, slow, until copy 2, sent once copy 1 is
// there, has the answer to its first try: under in-flight=answer-409 a 409
// at once, under the lesson's wait a 503 once the lock wait's bound has
// passed, or whatever else the design answers. Copy 2's retry waits for
// copy 1's COMMIT, so it meets the booking.
func slowFirstCopy(ctx context.Context, r *Run) ([]client.Outcome, error) {
	reached, release, committed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var there, freed, told sync.Once
	r.Stage.Instances[0].API.Engine.At = func(ctx context.Context, p engine.Point, _ engine.Request) error {
		a := trace.AttemptFrom(ctx)
		switch {
		case p == engine.PointBeforeCommit && a.Copy == 1 && a.Try == 1:
			if err := r.note(ctx, r.Stage.Instances[0].Name, "slow: held before COMMIT",
				"copy 1 is slow (a payment provider that takes its time, say): it holds its locks, before COMMIT, until copy 2, the second click, has an answer"); err != nil {
				return err
			}
			there.Do(func() { close(reached) })
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		case p == engine.PointAfterCommit:
			told.Do(func() { close(committed) })
		}
		return nil
	}
	in := client.NewIntent(1, r.EventID(), 2)
	clients := make([]*client.Client, 2)
	for i := range clients {
		c := r.browser(api.TokenAda, nil)
		answered := c.Answered
		c.Answered = func(in client.Intent, t client.TryResult) {
			if in.Copy == 2 {
				freed.Do(func() { close(release) })
			}
			answered(in, t)
		}
		c.Meanwhile = func(ctx context.Context, _ trace.Attempt) error {
			select {
			case <-committed:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		clients[i] = c
	}
	first, second := in, in
	first.Copy, second.Copy = 1, 2
	done := make(chan client.Outcome, 1)
	go func() {
		out := clients[0].Book(ctx, first)
		there.Do(func() { close(reached) }) // copy 1 ended without reaching COMMIT
		done <- out
	}()
	<-reached
	out2 := clients[1].Book(ctx, second)
	freed.Do(func() { close(release) }) // copy 2 ended without an answer
	return []client.Outcome{<-done, out2}, nil
}

// sleepsBeforeRetry makes c's laptop sleep after its first try: its
// retry goes out 25 hours later, past a 24 h expiry.
func (r *Run) sleepsBeforeRetry(c *client.Client) {
	c.Meanwhile = func(ctx context.Context, at trace.Attempt) error {
		if at.Try != 1 {
			return nil
		}
		return r.passTime(ctx, 25*time.Hour, "the laptop slept: the retry goes out 25 hours later")
	}
}

// passTime moves the run's clock forward by d; the stage's Redis reads
// the same clock, so its keys expire with it.
func (r *Run) passTime(ctx context.Context, d time.Duration, why string) error {
	fc, ok := r.Options.Clock.(*clock.Fake)
	if !ok {
		return fmt.Errorf("scenario %s needs a fake clock to let %s pass", r.Scenario.Name, d)
	}
	fc.Advance(d)
	if err := r.note(ctx, trace.LaneBrowser, fmt.Sprintf("%s pass", humanDuration(d)), why); err != nil {
		return err
	}
	_, err := r.Stage.Sweep(ctx) // the sweeper has run meanwhile, if keys expire
	return err
}

// humanDuration says d in words: "25 hours", "90 minutes", "3 seconds".
func humanDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return english.Plural(int(d/time.Hour), "hour", "")
	case d >= time.Minute && d%time.Minute == 0:
		return english.Plural(int(d/time.Minute), "minute", "")
	}
	return d.String()
}

// sendCopies sends Options.Copies copies of one intent (Ada's, 2 seats of
// the event) at the same instant, each from a browser of its own.
func sendCopies(ctx context.Context, r *Run) ([]client.Outcome, error) {
	in := client.NewIntent(1, r.EventID(), 2)
	copies := make([]client.Intent, r.Options.Copies)
	for i := range copies {
		copies[i] = in
		copies[i].Copy = i + 1
	}
	return r.together(ctx, []string{api.TokenAda}, copies), nil
}
