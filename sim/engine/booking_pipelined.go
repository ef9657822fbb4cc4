package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipelined reports whether BookTicket may send its statements in two
// round trips instead of one per statement: nobody watches (no trace, so
// no step has to wait for a viewer between two statements), no scenario
// holds the request at a Point (no barrier, no hook), and the design is
// the lesson's. This is how learn serve and the benchmarks book.
func (e *Engine) pipelined() bool {
	return e.Trace == nil && e.Barrier == nil && e.At == nil && e.Design == (Design{})
}

// The round trips of bookPipelined, each a pipeline of statements ended
// by one Sync, so PostgreSQL runs them in order and answers them together.
// The statements and their order are BookTicket's own:
//
//	1. BEGIN; lock the event row (FOR UPDATE); look up (user, key)
//	2a. new booking: take the seats; insert the booking; COMMIT
//	2b. a replay: COMMIT (nothing written); a refusal: ROLLBACK
//
// The lookup runs after the lock in the same session, so it sees what the
// copy that held the lock before committed, exactly as when it is sent on
// its own.

// bookPipelined is BookTicket for the lesson's design when nobody watches
// (see pipelined): the same transaction, the same statements in the same
// order, the same answers and errors, in two round trips.
func (e *Engine) bookPipelined(ctx context.Context, req Request) (Result, error) {
	pool := e.Pool()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("begin: %w", err)
	}
	res, err := e.bookOn(ctx, conn, req)
	// A connection left inside a transaction (an error between BEGIN and
	// COMMIT, a cancelled ctx) is rolled back here; if even that fails,
	// the pool closes it instead of handing it out again.
	if conn.Conn().PgConn().TxStatus() != 'I' {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
	conn.Release()
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == uniqueViolation {
		// Another copy committed first: everything of this transaction,
		// seats included, is rolled back; answer with the winner.
		return e.readWinner(ctx, req)
	}
	return res, err
}

func (e *Engine) bookOn(ctx context.Context, conn *pgxpool.Conn, req Request) (Result, error) {
	bc, err := prepareBook(ctx, conn.Conn())
	if err != nil {
		return Result{}, err
	}
	// The key goes as 16 bytes in PostgreSQL's binary format; a
	// uuid.UUID would be sent as text through its driver.Valuer.
	key := pgtype.UUID{Bytes: req.Key, Valid: true}
	rs, err := bc.send(ctx, req,
		queued{st: stBegin},
		queued{st: stLock, args: []any{req.EventID}},
		queued{st: stFind, args: []any{req.UserID, key}})
	if err != nil {
		return Result{}, err
	}
	var seatsLeft int
	var name string
	var startsAt time.Time
	prior := Booking{Key: req.Key}
	eventFound, err := bc.scan(rs[stLock], &name, &seatsLeft, &startsAt)
	if err != nil {
		return Result{}, fmt.Errorf("read event %d: %w", req.EventID, err)
	}
	found, err := bc.scan(rs[stFind], &prior.ID, &prior.UserID, &prior.EventID, &prior.Quantity, &prior.CreatedAt)
	if err != nil {
		return Result{}, fmt.Errorf("look up key: %w", err)
	}

	end := func(st int, refusal *Refusal) error {
		if _, err := bc.send(ctx, req, queued{st: st}); err != nil {
			return err
		}
		if refusal != nil {
			return refusal
		}
		return nil
	}
	switch {
	case !eventFound:
		return Result{}, end(stRollback, RefuseNoEvent(req.EventID))
	case found:
		res, refusal := e.Compare(prior, req)
		if refusal != nil {
			return Result{}, end(stRollback, refusal)
		}
		if err := end(stCommit, nil); err != nil {
			return Result{}, err
		}
		return res, nil
	case seatsLeft < req.Quantity:
		return Result{}, end(stRollback, RefuseNotEnoughSeats(seatsLeft, req.Quantity))
	}
	// PostgreSQL keeps microseconds: a replay must read back the very time
	// the first answer showed.
	now := e.Clock.Now().Truncate(time.Microsecond)
	if !startsAt.After(now) {
		return Result{}, end(stRollback, RefuseStarted())
	}

	nb := Booking{UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity, Key: req.Key, CreatedAt: now}
	rs, err = bc.send(ctx, req,
		queued{st: stTake, args: []any{req.EventID, req.Quantity}},
		queued{st: stInsert, args: []any{nb.UserID, nb.EventID, nb.Quantity, key, nb.CreatedAt}},
		queued{st: stCommit})
	if err != nil {
		return Result{}, err // a unique violation is handled by bookPipelined
	}
	if ok, err := bc.scan(rs[1], &nb.ID); !ok || err != nil {
		return Result{}, fmt.Errorf("insert: no booking id returned (%v)", err)
	}
	return Result{Booking: nb}, nil
}

// The statements of bookOn, as indexes of bookStatements.
const (
	stBegin = iota
	stLock
	stFind
	stTake
	stInsert
	stCommit
	stRollback
)

// bookStatements are bookOn's statements: the name each is prepared under
// on a connection, its SQL (BookTicket's own), and the step an error of it
// is told as.
var bookStatements = [...]struct{ name, sql, step string }{
	stBegin:    {"book_begin", sqlBegin, "begin"},
	stLock:     {"book_lock_event", sqlLockEvent, "read event"},
	stFind:     {"book_find_by_key", sqlFindByKey, "look up key"},
	stTake:     {"book_take_seats", sqlTakeSeats, "take seats"},
	stInsert:   {"book_insert", sqlInsertBooks, ""}, // a unique violation goes up as it is
	stCommit:   {"book_commit", "COMMIT", "COMMIT"},
	stRollback: {"book_rollback", "ROLLBACK", "ROLLBACK"},
}

// bookConn is one connection as bookOn uses it: below pgx's batches, on
// pgx's connection (pgconn), with the statements prepared and parameters
// and rows in PostgreSQL's binary format through the connection's pgtype
// map. pgx's batch keeps, per statement, a queue entry, a statement-cache
// look-up and a result reader that a booking of five fixed statements
// does not need: in BenchmarkBookTicket at 8 clients (three interleaved
// runs of each) this took the client from about 50 to 47 µs of CPU per
// booking and the engine from 0.86–0.88x to 0.89–0.91x of pgbench.
type bookConn struct {
	pg *pgconn.PgConn
	m  *pgtype.Map
	sd [len(bookStatements)]*pgconn.StatementDescription
}

// prepareBook prepares bookStatements on c the first time c books; after
// that each is a look-up in c's prepared statements (pgx's Prepare of a
// name already prepared with the same SQL makes no round trip).
func prepareBook(ctx context.Context, c *pgx.Conn) (bookConn, error) {
	bc := bookConn{pg: c.PgConn(), m: c.TypeMap()}
	for i, s := range bookStatements {
		sd, err := c.Prepare(ctx, s.name, s.sql)
		if err != nil {
			return bookConn{}, fmt.Errorf("prepare %s: %w", s.name, err)
		}
		bc.sd[i] = sd
	}
	return bc, nil
}

// queued is one statement of a round trip: which, and its parameters.
type queued struct {
	st   int
	args []any
}

// binaryFormat asks for every parameter and column in binary.
var binaryFormat = []int16{pgtype.BinaryFormatCode}

// send sends the statements in one round trip (one Sync, so PostgreSQL
// runs them in order and stops at the first error) and returns their
// results, in order. An error says the step that failed (see
// bookStatements) and wraps PostgreSQL's error or the connection's.
func (bc bookConn) send(ctx context.Context, req Request, stmts ...queued) ([]*pgconn.Result, error) {
	var b pgconn.Batch
	var buf []byte
	for _, q := range stmts {
		sd := bc.sd[q.st]
		var params [][]byte
		if len(q.args) > 0 {
			params = make([][]byte, len(q.args))
		}
		for i, a := range q.args {
			from := len(buf)
			var err error
			if buf, err = bc.m.Encode(sd.ParamOIDs[i], pgtype.BinaryFormatCode, a, buf); err != nil {
				return nil, bookStepError(q.st, req, err)
			}
			params[i] = buf[from:len(buf):len(buf)]
		}
		b.ExecStatement(sd, params, binaryFormat, binaryFormat)
	}
	rs, err := bc.pg.ExecBatch(ctx, &b).ReadAll()
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
		return nil, bookStepError(stmts[min(failed, len(stmts)-1)].st, req, err)
	}
	return rs, nil
}

// bookStepError wraps err with the step of statement st.
func bookStepError(st int, req Request, err error) error {
	switch step := bookStatements[st].step; {
	case st == stLock:
		return &RowLockError{Step: fmt.Sprintf("%s %d", step, req.EventID), Err: err}
	case step == "":
		return err
	default:
		return fmt.Errorf("%s: %w", step, err)
	}
}

// scan decodes the first row of r into dst, a column each, and reports
// whether r has a row.
func (bc bookConn) scan(r *pgconn.Result, dst ...any) (bool, error) {
	if len(r.Rows) == 0 {
		return false, nil
	}
	row := r.Rows[0]
	for i, d := range dst {
		fd := r.FieldDescriptions[i]
		if err := bc.m.Scan(fd.DataTypeOID, fd.Format, row[i], d); err != nil {
			return true, fmt.Errorf("column %s: %w", fd.Name, err)
		}
	}
	return true, nil
}
