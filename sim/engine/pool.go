package engine

import (
	"context"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/internal/quietconn"
)

// ConfigurePool readies the config of an engine's pool: its connections
// read and write without waking Go's scheduler (internal/quietconn: a
// booking is request/response, and between two answers every goroutine
// waits), and a connection that PostgreSQL closed while it sat in the pool
// (a restart sends FATAL 57P01 to every connection) is replaced before a
// booking uses it, whatever its idle time (pgx's own check pings only
// after a second idle). Call it before the pool is made; it keeps the
// config's dialer and wraps what it dials.
func ConfigurePool(pcfg *pgxpool.Config) {
	dial := pcfg.ConnConfig.DialFunc
	pcfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return quietconn.Wrap(c), nil
	}
	pcfg.PrepareConn = func(_ context.Context, c *pgx.Conn) (bool, error) {
		return !quietconn.Dead(c.PgConn().Conn()), nil
	}
}
