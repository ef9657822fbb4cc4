package exercises

import (
	"fmt"
	"slices"
)

// An Exercise is one rung of the ladder: one idea of the lesson added to
// the learner's BookTicket (or schema.sql), and the check rows that show
// it. An exercise passes when its checks and those of every exercise
// before it pass.
type Exercise struct {
	// ID names it on the command line (learn exercises check --only ID).
	ID    string `json:"id"`
	Title string `json:"title"`
	// Goal says what the learner's code must do, in one or two sentences.
	Goal string `json:"goal"`
	// File is where its TODO is.
	File string `json:"file"`
	// Lesson is the lesson's section that explains it.
	Lesson string `json:"lesson"`
	// Checks are learn check's scenarios that show it, each of which the
	// exercise's start (the reference solution of the one before) fails.
	Checks []string `json:"checks"`
	// Hints are given one at a time, the second nearer the answer.
	Hints [2]string `json:"-"`
	// Isolation is the database's default isolation level for the
	// instances its checks run on ("": PostgreSQL's, READ COMMITTED).
	Isolation string `json:"isolation,omitempty"`
	// OneTry makes learn's client send each request once: what the
	// exercise asks must hold without the client's retries.
	OneTry bool `json:"one_try,omitempty"`
}

// Ladder is the exercises, in the lesson's order. The module's start is
// the first exercise's start; each exercise's reference solution is the
// next one's start (testdata/steps), and the last one's is the module's
// solution.go and solution.sql.
var Ladder = []Exercise{
	{
		ID: "one-transaction", Title: "Seats and booking in one transaction", File: "booking.go",
		Goal:   "Take the seats and store the booking in one transaction, so that a crash before COMMIT leaves neither: PostgreSQL rolls back both.",
		Lesson: "How it works (In learn: all three commit together or roll back together)",
		Checks: []string{"crash-before-commit"},
		Hints: [2]string{
			"Each db.Exec and db.QueryRow outside a transaction commits on its own: the seats are taken before the booking is stored, and a crash between them keeps the seats.",
			"tx, err := db.Begin(ctx); defer tx.Rollback(ctx); run every statement on tx, then return tx.Commit(ctx)'s error with the answer.",
		},
	},
	{
		ID: "replay", Title: "The key in the row, and the lookup that replays", File: "booking.go",
		Goal:   "Before booking, look the idempotency key up in bookings; when a booking holds it, answer that booking as it stands and write nothing (Replayed: true makes the harness answer 200 with Idempotent-Replayed: true; the checks judge the booking answered, not the status).",
		Lesson: "How it works, step 2: check the key",
		Checks: []string{"lost-answer", "server-error", "other-instance"},
		Hints: [2]string{
			"The retry after a lost answer carries the same Idempotency-Key (req.Key), and the first try's booking row already holds it in idempotency_key.",
			"SELECT id, user_id, event_id, quantity, idempotency_key, created_at FROM bookings WHERE idempotency_key = $1, scanned into a Booking; on a row, return Answer{Booking: b, Replayed: true}, nil; on pgx.ErrNoRows, book as before.",
		},
	},
	{
		ID: "under-lock", Title: "The lookup under the row lock, before the seat check", File: "booking.go",
		Goal:   "Lock the event row first (SELECT … FOR UPDATE), then look the key up, and only then check the seats: copies queue on the lock, and a retry that took the last seats gets its booking back.",
		Lesson: "Follow-ups: Why look up the key before checking the seats?",
		Checks: []string{"lookup-before-lock", "concurrent-copies", "last-seats", "replay-after-sellout"},
		Hints: [2]string{
			"Two copies that look the key up before either has booked both find nothing and both book; and a retry whose first try took the last seats is refused by the seat check if that comes first.",
			"The order inside the transaction: SELECT seats_left FROM events WHERE id = $1 FOR UPDATE; then the lookup (a replay returns here); then the seat check; then the UPDATE and the INSERT.",
		},
	},
	{
		ID: "compare", Title: "Refuse the same key with another quantity or event", File: "booking.go",
		Goal:   "When the key's booking is for another event or quantity, refuse (409 Conflict with code key_reused, as the lesson does; the checks take 409 or 422) and write nothing; replay only the same request.",
		Lesson: "How it works, step 3: the same request, or another one?",
		Checks: []string{"different-quantity", "different-event"},
		Hints: [2]string{
			"A key is one intent: the same key with 3 seats where it booked 2 is a client's mistake, and answering the 2-seat booking hides it.",
			`Compare b.EventID and b.Quantity with the request's; when either differs, return Answer{}, &Refusal{Status: 409, Code: "key_reused", Message: "This idempotency key was already used for a different booking"}.`,
		},
	},
	{
		ID: "constraint", Title: "A unique constraint for the race the lock cannot see", File: "schema.sql and booking.go",
		Goal:   "One key sent for two events at once takes two row locks, and both lookups find nothing: make the database refuse the second insert (23505), roll that transaction back whole, and answer from the winner's booking (here 409: another event).",
		Lesson: "How it works, step 4: the constraint settles the rest",
		Checks: []string{"key-reuse-two-events"},
		Hints: [2]string{
			"Only a UNIQUE constraint on the key makes PostgreSQL let one insert through; the loser's INSERT fails with a unique violation, SQLSTATE 23505, and its transaction (the seats included) must be rolled back.",
			"In schema.sql: CONSTRAINT bookings_key UNIQUE (idempotency_key) (the next exercise scopes it by user). In booking.go: var pgErr *pgconn.PgError (import \"github.com/jackc/pgx/v5/pgconn\"); errors.As(err, &pgErr) && pgErr.Code == \"23505\" once the transaction is rolled back; then read the winner's booking with the lookup, on db (outside the failed transaction), and compare it as in the exercise before.",
		},
	},
	{
		ID: "per-user", Title: "A key belongs to one user", File: "booking.go and schema.sql",
		Goal:   "Scope the key by the user, in the lookup and in the constraint: two users who send the same key each get a booking of their own, never the other's.",
		Lesson: "Follow-ups: Does a key belong to one user, and why?",
		Checks: []string{"two-users-same-key"},
		Hints: [2]string{
			"Two users can send the same UUID; a lookup by the key alone answers the second with the first user's booking: a data leak.",
			"WHERE user_id = $1 AND idempotency_key = $2 in the lookup, and UNIQUE (user_id, idempotency_key) in schema.sql.",
		},
	},
	{
		ID: "client", Title: "The client: one key, retry only network errors and 5xx", File: "client.go",
		Goal:   "Write Book, the booking form's client: one idempotency key per intent, the same on every try; retry a network error or a 5xx, never a 4xx (its answer is final); at most 3 tries, waiting Backoff[0] and then Backoff[1].",
		Lesson: "How it works, step 1 and In learn (the client's rule)",
		Checks: []string{"client-lost-answer", "client-server-error", "client-refusal", "client-gives-up"},
		Hints: [2]string{
			"A retry carries the key of the first try, or the API cannot know it is a retry: make the key once, before the loop. A 4xx says the request itself is wrong (no seats left, a key used for another booking): sending it again gets the same answer.",
			"key := uuid.NewString() before the loop; for try := 1; try <= len(Backoff)+1; try++ { wait before tries 2 and 3; send with key; a network error or status >= 500: continue; else return the answer }.",
		},
	},
	{
		ID: "isolation", Title: "Past the page: correct under REPEATABLE READ", File: "booking.go",
		Goal:      "Some databases run every transaction at REPEATABLE READ. There a copy that waited for the row lock gets a serialization failure (SQLSTATE 40001) instead of a replay: retry the whole transaction (a few times), so that every copy still gets the booking, with the client sending each request once.",
		Lesson:    "How it works, step 4 (the copies that queue on the row lock); PostgreSQL's manual, Transaction Isolation",
		Checks:    []string{"concurrent-copies", "lookup-before-lock"},
		Isolation: "repeatable read", OneTry: true,
		Hints: [2]string{
			"At REPEATABLE READ a transaction sees the database as it was when it began: a copy that waited for the event's row lock finds the row changed under it, and PostgreSQL refuses with 40001 rather than book on a stale view.",
			"Loop around the transaction: for try := 0; try < 5; try++ { a, err := bookOnce(ctx, db, req); var pe *pgconn.PgError; if errors.As(err, &pe) && pe.Code == \"40001\" { continue }; return a, err }: each try a new transaction, so a new snapshot that sees the winner's booking.",
		},
	},
}

// Find is the exercise called id.
func Find(id string) (Exercise, error) {
	i := slices.IndexFunc(Ladder, func(e Exercise) bool { return e.ID == id })
	if i < 0 {
		var ids []string
		for _, e := range Ladder {
			ids = append(ids, e.ID)
		}
		return Exercise{}, fmt.Errorf("there is no exercise %q; the exercises are %v", id, ids)
	}
	return Ladder[i], nil
}

// UpTo are the ids of exercise id and of those before it.
func UpTo(id string) []string {
	var out []string
	for _, e := range Ladder {
		out = append(out, e.ID)
		if e.ID == id {
			break
		}
	}
	return out
}
