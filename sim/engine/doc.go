// Package engine is the booking engine of the lesson: the tables, the one
// transaction that books a ticket at most once per idempotency key, and
// the designs of it that the scenarios break on purpose.
//
// Start with [Engine.BookTicket] (booking.go), the service around the
// booking transaction: it validates the request, runs the transaction,
// and decides. The transaction reports what the bookings table holds for
// the key, created or existing ([TxReport]); the service decides whether
// an existing booking is a replay (200) or a conflict (409
// [MsgKeyReused], [Engine.Compare]), commits or rolls back, and settles a
// unique violation (SQLSTATE 23505) by reading the winner.
//
// The transaction is written once, as a [Plan] (plan.go): its steps in
// order, each statement written once. [PlanFor] gives the lesson's (lock
// the event row, look the key up, and only then check the seats and the
// start, take the seats and insert) and each design's other order. Two
// executors run a plan: step by step ([Plan.Book], stepwise.go), each
// step told to the trace so the play screen animates the real
// transaction, and pipelined (pipelined.go), in as few round trips as the
// order allows (two for the lesson's), when nobody watches (learn serve,
// the benchmarks). The tests hold the two equal: the same answers, rows
// and seats.
//
// The seam is [Transaction] (transaction.go): what a booking transaction
// is given (a [Tx]: the database transaction the engine began, and its
// clock) and must return (a [TxReport], or a [Refusal]). A Plan is one;
// a learner's own Go code, set as [Engine.Transaction], is another, run
// by the same service.
//
// It also holds:
//
//   - [Request], [Booking], [Result]: what is asked and what is answered;
//     [Refusal] and its codes, what the engine refuses with (the status the
//     lesson gives it: 400, 401, 404, 409), nothing written.
//   - [Design] with [LookupPlace], [CompareRule], [IsolationLevel],
//     [SerializationRule] and [InFlightRule]: the lesson's design is the
//     zero value, each field one mistake a broken scenario shows (or, for
//     the isolation level and the answer to a request in flight, another
//     safe design with its own cost); BookTicket runs a transaction
//     PostgreSQL failed with 40001 again, up to [MaxTxTries] runs, under
//     the lesson's rule; under [Answer409] the transaction begins by
//     claiming the key ([OpClaimKey]), and [Engine.AwaitKey] lets a
//     scenario's client wait for the request in flight to end.
//   - [Point], [Barrier] and [ErrCrash]: where a scenario holds a request
//     to force an interleaving, or makes the API instance die.
//   - schema.sql and [CreateSchema] with its [Constraint]s; the readers of
//     the tables ([ReadRows], [ReadEvent], [ReadBookings]) as the API and
//     the screens show them; [AllowKeyExpiry] and [SweepKeys], the key
//     sweeper of a design whose keys expire from their rows.
//   - [ConfigurePool], the pool an engine books through (quiet socket I/O,
//     dead idle connections replaced).
//
// The engine knows nothing of HTTP beyond the statuses the lesson names:
// the API (package api) answers its results, and the scenarios (package
// sim) build the world around it.
package engine
