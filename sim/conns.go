package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Connections: a stage opens every connection it will need while it is
// built, not in the middle of a run. A server that is full then says so
// before anything was booked, with a message that says what to do, rather
// than as an answer of 500 halfway through a scenario.

// DefaultConnWait is how long NewStage waits, by default, for a server that
// answers "too many clients" (SQLSTATE 53300) to have the connections the
// stage needs: long enough for other runs on the same server to end.
const DefaultConnWait = 15 * time.Second

// ConnSpare is how many of the server's connections a stage leaves free:
// a stage that would leave fewer is refused at once (ConnLimitError), so
// the scenarios fit in max_connections with room for psql, `learn doctor`
// and the pools' replacements of broken connections.
const ConnSpare = 3

// ErrTooManyClients is wrapped by the error of a stage that could not get
// its connections within its wait because the server kept answering "too
// many clients" (SQLSTATE 53300).
var ErrTooManyClients = errors.New("PostgreSQL has no free connection (too many clients, SQLSTATE 53300)")

// ConnLimitError is NewStage's error when the server's max_connections
// cannot hold the stage's connections with ConnSpare to spare, however long
// it waited.
type ConnLimitError struct {
	MaxConnections int // the server's max_connections
	Reserved       int // of those, reserved for superusers
	Need           int // connections the stage would hold at once
}

func (e *ConnLimitError) Error() string {
	return fmt.Sprintf("this PostgreSQL allows %d connections (max_connections %d, %d of them reserved for superusers) and this run needs %d at once, plus %d to spare: raise max_connections, or run fewer copies at once",
		e.MaxConnections-e.Reserved, e.MaxConnections, e.Reserved, e.Need, ConnSpare)
}

// isTooManyClients reports whether err is PostgreSQL refusing a connection
// because it has none free (SQLSTATE 53300, also for a role's or a
// database's CONNECTION LIMIT).
func isTooManyClients(err error) bool {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pgErr.Code == "53300"
}

// poolNeed is a pool and how many connections it must hold.
type poolNeed struct {
	pool *pgxpool.Pool
	n    int
	what string // "the admin pool", "API instance api-1"
}

// reserve opens the connections of every pool at once and gives them back
// to their pools idle, so that the pools hold them for the run. It is all
// or nothing: when the server answers "too many clients" it closes every
// connection it opened (runs that each held part of what they need would
// otherwise wait for each other until all gave up), waits a random,
// growing backoff, and tries again, for up to wait; then the error wraps
// ErrTooManyClients and the server's own message and says what to do. Any
// other failure, or ctx ending, is returned at once.
func reserve(ctx context.Context, wait time.Duration, needs ...poolNeed) error {
	deadline := time.Now().Add(wait)
	backoff := 20 * time.Millisecond
	for {
		got, what, err := acquireAll(ctx, needs)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !isTooManyClients(err) {
			return fmt.Errorf("connect %s: %w", what, err)
		}
		for _, nd := range needs {
			nd.pool.Reset() // give the server back what this try opened
		}
		if !time.Now().Before(deadline) {
			total := 0
			for _, nd := range needs {
				total += nd.n
			}
			return fmt.Errorf("%w: this run needs %d connections at once and got at most %d in %s, because other clients hold the rest of the server's max_connections (%v); end other learn runs or programs using this PostgreSQL and try again, run fewer copies, or raise max_connections",
				ErrTooManyClients, total, got, wait, err)
		}
		t := time.NewTimer(min(backoff/2+rand.N(backoff), time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// acquireAll acquires every pool's connections and releases them; on error
// it says how many it held and for which pool it failed.
func acquireAll(ctx context.Context, needs []poolNeed) (got int, what string, err error) {
	var held []*pgxpool.Conn
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	for _, nd := range needs {
		for range nd.n {
			c, err := nd.pool.Acquire(ctx)
			if err != nil {
				return len(held), nd.what, err
			}
			held = append(held, c)
		}
	}
	return len(held), "", nil
}

// checkLimit fails with a ConnLimitError when the server's max_connections
// cannot hold need connections with ConnSpare to spare; settings are the
// server's (serverSettings).
func checkLimit(settings map[string]string, need int) error {
	limit, err := strconv.Atoi(settings["max_connections"])
	if err != nil {
		return fmt.Errorf("read the server's max_connections: %q: %w", settings["max_connections"], err)
	}
	reserved, err := strconv.Atoi(settings["superuser_reserved_connections"])
	if err != nil {
		return fmt.Errorf("read the server's superuser_reserved_connections: %q: %w", settings["superuser_reserved_connections"], err)
	}
	if need+ConnSpare > limit-reserved {
		return &ConnLimitError{MaxConnections: limit, Reserved: reserved, Need: need}
	}
	return nil
}
