//go:build linux

package pgtemp

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/internal/pgfault"
	"github.com/learn-idempotency/learn/pgtemp/internal/proc"
)

// A Drop waiting on a server that hangs holds up neither Close nor the
// other schemas' Drops: each runs its own round trip, and once Close has
// stopped the cluster the waiting Drops end (with nil: the schemas went
// with the cluster). Before, Drop held the server's lock over its round
// trip, so Close waited for every stuck Drop's deadline, one after
// another.
func TestStuckDropsHoldUpNeitherCloseNorEachOther(t *testing.T) {
	t.Parallel()
	needLocal(t)
	s := startT(t, isolated(t, ""))
	ctx := t.Context()
	var schemas []*Schema
	for range 3 {
		sc, err := s.NewSchema(ctx)
		if err != nil {
			t.Fatal(err)
		}
		schemas = append(schemas, sc)
	}
	pm := clusterOf(s).PID()
	all := append([]int{pm}, proc.ChildPIDs(pm)...)
	// Each connection the server's own config makes says when it has
	// reached the server: a Drop is then stuck on the stopped server.
	reached := make(chan struct{}, 16)
	dial := s.cfg.DialFunc
	s.cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err == nil {
			select {
			case reached <- struct{}{}:
			default:
			}
		}
		return c, err
	}
	pgfault.Hang(t, all...)
	// Each Drop may wait a minute: far longer than Close needs.
	const dropWait = time.Minute
	dropped := make(chan error, len(schemas))
	for _, sc := range schemas {
		go func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropWait)
			defer cancel()
			dropped <- sc.Drop(dctx)
		}()
	}
	for range schemas { // every Drop waits on the stopped server
		<-reached
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(dropWait / 2):
		t.Fatal("Close still waits after 30 s: it waits for the stuck Drops")
	}
	for range schemas {
		select {
		case err := <-dropped:
			if err != nil {
				t.Errorf("Drop after Close stopped the cluster: %v; want nil (the schema went with the cluster)", err)
			}
		case <-time.After(dropWait / 2):
			t.Fatal("a Drop still waits 30 s after Close stopped the cluster")
		}
	}
	for _, p := range all {
		if proc.Running(p) {
			t.Errorf("process %d of the cluster is still there after Close", p)
		}
	}
	if _, err := s.NewSchema(ctx); err == nil || !strings.Contains(err.Error(), "already closed") {
		t.Errorf("NewSchema after Close: %v; want the server already closed", err)
	}
}
