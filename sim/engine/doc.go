// Package engine is the booking engine of the lesson: the tables, the one
// transaction that books a ticket at most once per idempotency key, and
// the designs of it that the scenarios break on purpose.
//
// Start with [Engine.BookTicket] (booking.go): one transaction at READ
// COMMITTED that locks the event row, looks the key up, and only then
// checks the seats and the start, takes the seats and inserts the
// booking; a unique violation (SQLSTATE 23505) rolls the whole
// transaction back and answers with the winner. The transaction reports
// whether the booking was created or existed; [Engine.Compare], the
// service, decides whether an existing booking is a replay (200) or a
// conflict (409 [MsgKeyReused]). An unwatched engine (no trace, no
// barrier, no hook, the lesson's design) sends the same statements in two
// round trips (booking_pipelined.go); a watched one sends them one by one
// and tells each step to its trace, so the play screen animates the real
// transaction.
//
// It holds:
//
//   - [Request], [Booking], [Result]: what is asked and what is answered;
//     [Refusal] and its codes, what the engine refuses with (the status the
//     lesson gives it: 400, 401, 404, 409), written nothing.
//   - [Design] with [LookupPlace] and [CompareRule]: the lesson's design is
//     the zero value, each field one mistake a broken scenario shows.
//   - [Point], [Barrier] and [ErrCrash]: where a scenario holds a request
//     to force an interleaving, or makes the API instance die.
//   - schema.sql and [CreateSchema] with its [Constraint]s; the readers of
//     the tables ([ReadRows], [ReadEvent], [ReadBookings]) as the API and
//     the screens show them.
//   - [ConfigurePool], the pool an engine books through (quiet socket I/O,
//     dead idle connections replaced).
//
// The engine knows nothing of HTTP beyond the statuses the lesson names:
// the API (package api) answers its results, and the scenarios (package
// sim) build the world around it.
package engine
