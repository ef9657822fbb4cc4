// Package quietconn is socket I/O that does not wake Go's scheduler: the
// reads, writes and peeks of the booking engine's connections to
// PostgreSQL, made as raw system calls on a non-blocking socket while the
// waits still go through Go's netpoller (deadlines, cancellation and
// Close work as on any net.Conn).
//
// It holds two things:
//
//   - [Wrap] makes a Unix or TCP connection a [Conn], whose Read and
//     Write are one read(2) or write(2) each, with no system-call
//     bookkeeping: between two answers every goroutine of a
//     request/response client waits, Go's monitor thread (sysmon) sleeps
//     deeply, and the first ordinary system call after the wait wakes it.
//     The booking engine's pools dial through it (engine.ConfigurePool).
//   - [Dead] peeks at an idle connection without blocking and without
//     taking the byte: a byte waiting or the end of the stream means the
//     peer spoke or hung up (PostgreSQL's FATAL at a restart), so a pool
//     replaces the connection before a request uses it.
//
// Neither pgx nor net offers these: pgconn's CheckConn reads with a 1 ms
// deadline (a wait on every acquire), and net's reads and writes enter
// the scheduler's system-call path. BENCHMARKS.md gives what they are
// worth in BenchmarkBookTicket. Elsewhere than Unix, Wrap returns the
// connection as it is and Dead reports false.
package quietconn
