// Package trace is what every layer of the booking world tells and the
// screens draw: the record of one run, as a sequence of [Event]s between
// lanes (the browser, each API instance, Redis, PostgreSQL).
//
// It holds:
//
//   - [Event] and its [Kind]s: steps of the sequence (a send, the row
//     lock, the key's lookup, the write, COMMIT or ROLLBACK, an answer, a
//     backoff, a crash) and side-pane detail (a statement as pgx sent it,
//     a line of an API instance's log). The lanes: [LaneBrowser],
//     [LaneAPI], [LaneRedis], [LanePostgres], and [Lane] for a screen.
//   - [Trace], which records events in the order they are emitted, streams
//     them to a viewer ([Options].Stream) and can gate each step until the
//     viewer releases it ([Options].Gated), so a live run plays, pauses and
//     steps. It also keeps the database's order on screen: [Trace.WaitFor]
//     and [Trace.Writing]/[Trace.AwaitWrites] let a reader of a write be
//     told after the write. A nil *Trace discards everything: nobody
//     watches.
//   - [Attempt], the intent, copy and try a request belongs to, carried in
//     the context ([WithAttempt], [AttemptFrom]) from the client through
//     the network and the API to the engine, so each layer's events name
//     the try.
//   - adapters that turn other streams into events: [SQLTracer] (pgx's
//     query tracer, the SQL pane) and [LogHandler] (slog, the API log
//     pane).
//
// Times are read on the run's clock (package clock), so a trace of a run
// on a fake clock says 1 s for the lesson's first backoff. Start with
// [Trace.Emit]; the engine, the API, the client and the network each
// emit their own steps, and the scenarios and the screens read
// [Trace.Recorded] or [Trace.Events].
package trace
