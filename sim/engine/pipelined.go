package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/learn-idempotency/learn/sim/clock"
)

// The pipelined executor runs a Plan in round trips (Plan.rounds), each a
// pipeline of statements ended by one Sync, so PostgreSQL runs them in
// order, stops at the first error, and answers them together. For the
// lesson's plan:
//
//	1. BEGIN; lock the event row (FOR UPDATE); look up (user, key)
//	2a. new booking: take the seats; insert the booking; COMMIT
//	2b. a replay: COMMIT (nothing written); a refusal: ROLLBACK
//
// The lookup runs after the lock in the same session, so it sees what the
// copy that held the lock before committed, exactly as when it is sent on
// its own. A new booking is committed in the round trip of its writes:
// nobody watches, so nothing holds it before COMMIT. A report of an
// existing booking, or a refusal, returns with the transaction open, for
// the service to end.
//
// Below pgx's batches, on pgx's connection (pgconn): the statements are
// prepared by name once per connection, parameters and rows in
// PostgreSQL's binary format through the connection's pgtype map. pgx's
// batch keeps, per statement, a queue entry, a statement-cache look-up
// and a result reader that a booking of five fixed statements does not
// need: in BenchmarkBookTicket at 8 clients (three interleaved runs of
// each) this took the client from about 50 to 47 µs of CPU per booking
// and the engine from 0.86–0.88x to 0.89–0.91x of pgbench.

// The statements a pipelined booking sends besides its plan's, numbered
// after the plan's steps.
const (
	stBegin Op = OpClaimKey + 1 + iota
	stCommit
	stRollback
	stBeginRepeatableRead
	stBeginSerializable
	stLast = stBeginSerializable
)

// The engine's transactions run at the design's isolation level
// (Design.Isolation), whatever the session's default_transaction_isolation
// says (a server, database or role may make it serializable): at READ
// COMMITTED, the lesson's, a copy that waited for the row lock reads the
// row as the copy before it committed it, and finds its booking (lesson,
// "How it works"), where REPEATABLE READ or SERIALIZABLE fail it with
// 40001. The level is the engine's design, not the server's: beginOp
// names the statement that begins the pipelined transaction, and
// txOptions the same options as pgx sends them for the step-by-step one.
const sqlBegin = "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE"

// beginOp is the prepared BEGIN of level l.
func beginOp(l IsolationLevel) Op {
	switch l {
	case RepeatableRead:
		return stBeginRepeatableRead
	case Serializable:
		return stBeginSerializable
	}
	return stBegin
}

// txOptions are the step-by-step executor's options for level l.
func txOptions(l IsolationLevel) pgx.TxOptions {
	level := map[IsolationLevel]pgx.TxIsoLevel{ReadCommitted: pgx.ReadCommitted, RepeatableRead: pgx.RepeatableRead, Serializable: pgx.Serializable}[l]
	return pgx.TxOptions{IsoLevel: level, AccessMode: pgx.ReadWrite}
}

// prepared are the statements of a pipelined booking, in the order they
// are prepared on a connection, with the name each is prepared under.
var prepared = []struct {
	op   Op
	name string
	sql  string
}{
	{stBegin, "book_begin", sqlBegin},
	{OpLockEvent, "book_lock_event", sqlLockEvent},
	{OpReadEvent, "book_read_event", sqlReadEvent},
	{OpFindKey, "book_find_by_key", sqlFindByKey},
	{OpFindKeyAnyUser, "book_find_any_user", sqlFindAnyUser},
	{OpTakeSeats, "book_take_seats", sqlTakeSeats},
	{OpInsert, "book_insert", sqlInsertBooks},
	{OpClaimKey, "book_claim_key", sqlClaimKey},
	{stCommit, "book_commit", "COMMIT"},
	{stRollback, "book_rollback", "ROLLBACK"},
	{stBeginRepeatableRead, "book_begin_repeatable_read", "BEGIN ISOLATION LEVEL REPEATABLE READ READ WRITE"},
	{stBeginSerializable, "book_begin_serializable", "BEGIN ISOLATION LEVEL SERIALIZABLE READ WRITE"},
}

// bookPipelined is BookTicket's transaction, plan c, when nobody watches
// (see Pipelined): the same statements in the same order, the same
// answers and errors, in the round trips of c (two for the lesson's).
func (e *Engine) bookPipelined(ctx context.Context, c compiledPlan, req Request) (Result, error) {
	p := c.plan
	conn, err := e.Pool().Acquire(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		// A connection left inside a transaction (an error between BEGIN
		// and COMMIT, a cancelled ctx) is rolled back here; if even that
		// fails, the pool closes it instead of handing it out again.
		if conn.Conn().PgConn().TxStatus() != 'I' {
			_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		conn.Release()
	}()
	pc, err := preparePipe(ctx, conn.Conn())
	if err != nil {
		return Result{}, err
	}
	rep, err := pc.run(ctx, c, beginOp(e.Design.Isolation), req, e.Clock)
	if refusal, ok := errors.AsType[*Refusal](err); ok {
		if err := pc.end(ctx, p, req, false); err != nil {
			return Result{}, err
		}
		return Result{}, refusal
	}
	if err != nil {
		return Result{}, err // a unique violation is handled by BookTicket
	}
	if rep.State == Created { // committed in the round trip of its writes
		return Result{Booking: rep.Booking}, nil
	}
	res, refusal := e.Compare(rep.Booking, req)
	if err := pc.end(ctx, p, req, refusal == nil); err != nil {
		return Result{}, err
	}
	if refusal != nil {
		return Result{}, refusal
	}
	return res, nil
}

// pipeConn is one connection as the pipelined executor uses it.
type pipeConn struct {
	pg *pgconn.PgConn
	m  *pgtype.Map
	sd [stLast + 1]*pgconn.StatementDescription // by Op
}

// preparePipe prepares the statements on c the first time c books; after
// that each is a look-up in c's prepared statements (pgx's Prepare of a
// name already prepared with the same SQL makes no round trip).
func preparePipe(ctx context.Context, c *pgx.Conn) (pipeConn, error) {
	pc := pipeConn{pg: c.PgConn(), m: c.TypeMap()}
	for _, s := range prepared {
		sd, err := c.Prepare(ctx, s.name, s.sql)
		if err != nil {
			return pipeConn{}, fmt.Errorf("prepare %s: %w", s.name, err)
		}
		pc.sd[s.op] = sd
	}
	return pc, nil
}

// run runs plan c for req in round trips, begun by statement begin; clk is
// the engine's. It
// returns the report (a Created booking committed, an Existing one with
// the transaction open), a *Refusal (the transaction open), or an error
// of the step that failed (stepError).
func (pc pipeConn) run(ctx context.Context, c compiledPlan, begin Op, req Request, clk clock.Clock) (TxReport, error) {
	p, rounds := c.plan, c.rounds
	if err := p.valid(); err != nil {
		return TxReport{}, err
	}
	s := newState(p, req, clk, true)
	for i, round := range rounds {
		var room [8]queued
		stmts := room[:0]
		if i == 0 {
			stmts = append(stmts, queued{op: begin})
		}
		for _, op := range round {
			if op.statement() != "" {
				stmts = append(stmts, queued{op: op, args: s.args(op)})
			}
		}
		commit := i == len(rounds)-1 && !decidesAny(round)
		if commit {
			stmts = append(stmts, queued{op: stCommit})
		}
		rs, err := pc.send(ctx, p, req, stmts...)
		if err != nil {
			return TxReport{}, err
		}
		if i == 0 {
			rs = rs[1:] // BEGIN's
		}
		for _, op := range round {
			row := true
			if op.statement() != "" {
				var into [5]any
				if row, err = pc.scan(rs[0], s.dest(op, into[:0])...); err != nil {
					return TxReport{}, stepError(p, op, req, err)
				}
				rs = rs[1:]
			}
			done, refusal, err := s.decide(op, row)
			switch {
			case err != nil:
				return TxReport{}, err
			case refusal != nil:
				return TxReport{}, refusal
			case done:
				return TxReport{State: Existing, Booking: s.prior}, nil
			}
		}
		if i == len(rounds)-1 && !commit {
			if err := pc.end(ctx, p, req, true); err != nil {
				return TxReport{}, err
			}
		}
	}
	return s.report(), nil
}

// decidesAny reports whether a step of round may end the transaction.
func decidesAny(round []Op) bool {
	for _, op := range round {
		if op.decides() {
			return true
		}
	}
	return false
}

// end ends the transaction left open by run: COMMIT, or ROLLBACK.
func (pc pipeConn) end(ctx context.Context, p Plan, req Request, commit bool) error {
	st := stRollback
	if commit {
		st = stCommit
	}
	_, err := pc.send(ctx, p, req, queued{op: st})
	return err
}

// queued is one statement of a round trip: which, and its parameters.
type queued struct {
	op   Op
	args []any
}

// binaryFormat asks for every parameter and column in binary.
var binaryFormat = []int16{pgtype.BinaryFormatCode}

// send sends the statements in one round trip and returns their results,
// in order. An error says the step that failed (stepError; BEGIN, COMMIT
// and ROLLBACK by name) and wraps PostgreSQL's error or the connection's.
func (pc pipeConn) send(ctx context.Context, p Plan, req Request, stmts ...queued) ([]*pgconn.Result, error) {
	var b pgconn.Batch
	var buf []byte
	for _, q := range stmts {
		sd := pc.sd[q.op]
		var params [][]byte
		if len(q.args) > 0 {
			params = make([][]byte, len(q.args))
		}
		for i, a := range q.args {
			from := len(buf)
			var err error
			if buf, err = pc.m.Encode(sd.ParamOIDs[i], pgtype.BinaryFormatCode, a, buf); err != nil {
				return nil, pipeError(p, q.op, req, err)
			}
			params[i] = buf[from:len(buf):len(buf)]
		}
		b.ExecStatement(sd, params, binaryFormat, binaryFormat)
	}
	rs, err := pc.pg.ExecBatch(ctx, &b).ReadAll()
	if err != nil {
		// The statement that failed is the first whose result holds an
		// error, or the first with no result when the connection failed.
		failed := len(rs)
		for i, r := range rs {
			if r.Err != nil {
				failed = i
				break
			}
		}
		return nil, pipeError(p, stmts[min(failed, len(stmts)-1)].op, req, err)
	}
	return rs, nil
}

// pipeError is err of statement op with the step it failed at.
func pipeError(p Plan, op Op, req Request, err error) error {
	switch op {
	case stBegin, stBeginRepeatableRead, stBeginSerializable:
		return fmt.Errorf("begin: %w", err)
	case stCommit:
		return fmt.Errorf("commit: %w", err)
	case stRollback:
		return fmt.Errorf("rollback: %w", err)
	}
	return stepError(p, op, req, err)
}

// scan decodes the first row of r into dst, a column each, and reports
// whether r has a row.
func (pc pipeConn) scan(r *pgconn.Result, dst ...any) (bool, error) {
	if len(r.Rows) == 0 {
		return false, nil
	}
	row := r.Rows[0]
	for i, d := range dst {
		fd := r.FieldDescriptions[i]
		if err := pc.m.Scan(fd.DataTypeOID, fd.Format, row[i], d); err != nil {
			return true, fmt.Errorf("column %s: %w", fd.Name, err)
		}
	}
	return true, nil
}
