//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package engine

import (
	"runtime"
	"testing"

	"github.com/learn-idempotency/learn/internal/quietconn"
)

// The engine's pools are the ones that book, and every connection they
// make is quiet; quietconn.Dead still peeks through it.
func TestEngineConnectionsAreQuiet(t *testing.T) {
	st, _ := newWorld(t, 10, worldConfig{})
	conn, err := st.Engine.Pool().Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	c := conn.Conn().PgConn().Conn()
	if _, ok := c.(*quietconn.Conn); !ok {
		t.Fatalf("the engine's connection is a %T; want *quietconn.Conn", c)
	}
	if quietconn.Dead(c) {
		t.Fatal("quietconn.Dead says a live idle connection is dead")
	}
	// The server ends this backend: the FATAL it sends is seen by the peek.
	var pid int
	if err := conn.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Admin.Exec(t.Context(), "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	for !quietconn.Dead(c) { // until the server's FATAL has crossed loopback
		runtime.Gosched()
	}
}
