package resp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// The RESP client against a real Redis protocol server: replies of every
// kind, the TTL, an error reply, and a server that went away.
func TestRESPClient(t *testing.T) {
	srv := miniredis.RunT(t)
	c := New(srv.Addr())
	t.Cleanup(func() { c.Close() })
	ctx := t.Context()

	if _, err := c.Do(ctx, "GET", "k"); !errors.Is(err, ErrNil) {
		t.Fatalf("GET of a missing key: %v, want the nil reply", err)
	}
	if r, err := c.Do(ctx, "SET", "k", "b7", "PX", "60000"); err != nil || r != "OK" {
		t.Fatalf("SET = %v, %v; want OK", r, err)
	}
	if r, err := c.Do(ctx, "GET", "k"); err != nil || r != "b7" {
		t.Fatalf("GET = %v, %v; want b7", r, err)
	}
	if got := srv.TTL("k"); got != time.Minute {
		t.Errorf("the server holds the key for %s, want 1m0s (PX 60000)", got)
	}
	if r, err := c.Do(ctx, "DBSIZE"); err != nil || r != int64(1) {
		t.Errorf("DBSIZE = %v (%T), %v; want the integer 1", r, r, err)
	}
	if r, err := c.Do(ctx, "KEYS", "*"); err != nil || len(r.([]any)) != 1 {
		t.Errorf("KEYS = %v, %v; want an array of one", r, err)
	}
	srv.FastForward(2 * time.Minute)
	if _, err := c.Do(ctx, "GET", "k"); !errors.Is(err, ErrNil) {
		t.Errorf("GET after the TTL: %v, want the nil reply", err)
	}
	var rerr Error
	if _, err := c.Do(ctx, "NOSUCHCOMMAND"); !errors.As(err, &rerr) {
		t.Errorf("an unknown command: %v, want an error reply", err)
	}
	// The connection survives an error reply, and is dialled anew after
	// the server restarts.
	srv.Restart()
	if r, err := c.Do(ctx, "SET", "k", "b8", "PX", "1000"); err != nil && r == nil {
		// The first command after the restart may fail on the old connection.
		if r, err = c.Do(ctx, "SET", "k", "b8", "PX", "1000"); err != nil || r != "OK" {
			t.Fatalf("SET after a restart = %v, %v", r, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Do(cancelled, "GET", "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("GET with a cancelled context: %v, want context.Canceled", err)
	}
}
