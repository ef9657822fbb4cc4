package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/sim/engine"
)

// The codes of the 503s an API instance answers when its database cannot
// take the request now; each comes with Retry-After.
const (
	CodeDatabaseBusy        = "database_busy"        // every connection of the pool stayed busy for ServeLimits.DBWait
	CodeEventBusy           = "event_busy"           // the event's row lock stayed taken for ServeLimits.LockWait
	CodeDatabaseUnavailable = "database_unavailable" // PostgreSQL refused or dropped the connection
	// CodeSerializationFailure: PostgreSQL failed the booking transaction
	// with 40001 (REPEATABLE READ, SERIALIZABLE) and the engine did not,
	// or no longer, run it again (engine.Design.On40001).
	CodeSerializationFailure = "serialization_failure"
)

// SQLSTATEs the API answers with 503.
const (
	lockNotAvailable = "55P03" // lock_timeout passed
	queryCanceled    = "57014" // statement_timeout passed (learn sends no cancel requests)
	cannotConnectNow = "57P03" // the server is starting up, shutting down or recovering
	adminShutdown    = "57P01" // this connection was ended: pg_terminate_backend, or a shutdown
	crashShutdown    = "57P02" // another server process crashed: every connection is ended
)

// statementTimeout is the statement_timeout of the pool's connections (the
// row lock's bound, ServeLimits.LockWait), 0 when none is set.
func statementTimeout(pool *pgxpool.Pool) time.Duration {
	ms, err := strconv.Atoi(pool.Config().ConnConfig.RuntimeParams["statement_timeout"])
	if err != nil {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// LimitPool makes an API instance's pool keep the limits' waits for
// the database:
//
//   - DBWait bounds each wait for a connection of the pool (through a pgx
//     acquire tracer, so the wait and nothing else: a held step keeps the
//     connection it has);
//   - LockWait is the connections' statement_timeout (sessionSettings,
//     which NewStage sets): it bounds the whole wait of the statement
//     that takes the event's row lock.
//
// tracer is the pool's query tracer so far (nil for none).
func (l ServeLimits) LimitPool(pcfg *pgxpool.Config, tracer pgx.QueryTracer) {
	if l.DBWait > 0 {
		tracer = &acquireLimit{wait: l.DBWait, inner: tracer}
	}
	if tracer != nil {
		pcfg.ConnConfig.Tracer = tracer
	}
}

// acquireLimit bounds each Acquire of a pool to wait: pgxpool uses the
// context an acquire tracer returns for the wait, and only for the wait.
// It passes queries on to inner.
type acquireLimit struct {
	wait  time.Duration
	inner pgx.QueryTracer // may be nil
}

// acquireCancel holds, in the context of an Acquire, the cancel function
// of its deadline.
type acquireCancel struct{}

func (a *acquireLimit) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	ctx, cancel := context.WithTimeout(ctx, a.wait)
	return context.WithValue(ctx, acquireCancel{}, cancel)
}

func (a *acquireLimit) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	if cancel, ok := ctx.Value(acquireCancel{}).(context.CancelFunc); ok {
		cancel()
	}
}

func (a *acquireLimit) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if a.inner == nil {
		return ctx
	}
	return a.inner.TraceQueryStart(ctx, c, d)
}

func (a *acquireLimit) TraceQueryEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryEndData) {
	if a.inner != nil {
		a.inner.TraceQueryEnd(ctx, c, d)
	}
}

// dbRefusal turns an error of the database, met while serving a request
// whose context is ctx, into the answer: 503 with Retry-After when the
// database cannot take the request now (no connection free within DBWait,
// the event locked past LockWait, PostgreSQL unreachable or restarting, a
// serialization failure the design does not take for an error: d.On40001),
// nil for any other error (a 500).
func dbRefusal(ctx context.Context, err error, lane string, pool *pgxpool.Pool, d engine.Design) *Error {
	unavailable := func(msg string, args ...any) *Error {
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeDatabaseUnavailable, Message: fmt.Sprintf(msg, args...)}
	}
	pgErr, _ := errors.AsType[*pgconn.PgError](err)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		// The request has no deadline of its own: this is the acquire's.
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeDatabaseBusy, Message: fmt.Sprintf(
			"All %d database connections of %s stayed busy; nothing was stored, so retry in a moment with the same idempotency key",
			pool.Config().MaxConns, lane)}
	case pgErr != nil && pgErr.Code == queryCanceled:
		waited := "longer than this API instance waits"
		if d := statementTimeout(pool); d > 0 {
			waited = d.String() + ", the longest this API instance waits"
		}
		if _, ok := errors.AsType[*engine.RowLockError](err); ok {
			return &Error{Status: http.StatusServiceUnavailable, Code: CodeEventBusy, Message: "The event stayed locked by other transactions for " + waited + " for its row lock; nothing was stored, so retry in a moment with the same idempotency key"}
		}
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeDatabaseBusy, Message: "A statement of this booking waited " + waited + " (PostgreSQL cancelled it: statement_timeout, 57014); retry in a moment with the same idempotency key: a booking that was stored comes back as a replay"}
	case pgErr != nil && pgErr.Code == engine.SerializationFailure && d.On40001 != engine.Answer500:
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeSerializationFailure, Message: fmt.Sprintf(
			"PostgreSQL could not serialize this booking with another transaction (40001 at %s); nothing was stored, so retry in a moment with the same idempotency key: a booking that was stored comes back as a replay",
			d.Isolation.SQL())}
	case pgErr != nil && pgErr.Code == lockNotAvailable:
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeEventBusy, Message: "The event is locked by another transaction for longer than this API instance waits; nothing was stored, so retry in a moment with the same idempotency key"}
	case pgErr != nil && pgErr.Code == adminShutdown:
		return unavailable("PostgreSQL ended this request's database connection (57P01: pg_terminate_backend, or a shutdown of the server); retry in a moment with the same idempotency key: a booking that was stored comes back as a replay")
	case pgErr != nil && pgErr.Code == crashShutdown:
		return unavailable("PostgreSQL ended every connection because one of its processes crashed (57P02); retry in a moment with the same idempotency key: a booking that was stored comes back as a replay")
	case pgErr != nil && pgErr.Code == cannotConnectNow:
		return unavailable("PostgreSQL is not taking connections now (57P03: %s); retry in a moment with the same idempotency key: a booking that was stored comes back as a replay", pgErr.Message)
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return unavailable("PostgreSQL cannot be reached right now; nothing was stored, so retry in a moment with the same idempotency key")
	}
	if connectionLost(err) {
		return unavailable("PostgreSQL dropped the connection in the middle of this request, so whether the booking was stored is not known; retry in a moment with the same idempotency key: a booking that was stored comes back as a replay, one that was not is made then")
	}
	return nil
}

// connectionLost reports whether err says the connection to PostgreSQL
// ended under a request without a word from the server (a backend killed,
// the server stopped with -m immediate, a network cut): the stream's end,
// a reset or broken pipe, or pgx's "conn closed" for a connection that
// died earlier. The request's outcome is then unknown: a COMMIT may have
// reached the server before the answer was lost.
func connectionLost(err error) bool {
	for _, target := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE,
		syscall.ECONNABORTED, net.ErrClosed, pgconn.ErrConnClosed} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
