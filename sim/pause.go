package sim

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Barrier holds every caller of Wait until n callers have arrived, then lets
// them all go: "both copies have looked up the key, then both insert". It is
// used once.
type Barrier struct {
	n     int
	mu    sync.Mutex
	count int
	open  chan struct{}
}

// NewBarrier returns a barrier for n callers.
func NewBarrier(n int) *Barrier { return &Barrier{n: n, open: make(chan struct{})} }

// barrierTimeout bounds a wait at a barrier: a copy that failed before the
// pause point never arrives, and the others must not wait for it forever.
const barrierTimeout = 20 * time.Second

// Wait blocks until n callers have called Wait, or ctx ends (then it returns
// ctx.Err()), or barrierTimeout passes (then an error says how many came).
func (b *Barrier) Wait(ctx context.Context) error {
	b.mu.Lock()
	b.count++
	if b.count == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	t := time.NewTimer(barrierTimeout)
	defer t.Stop()
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		b.mu.Lock()
		defer b.mu.Unlock()
		return fmt.Errorf("forced interleaving: only %d of %d copies reached the pause point in %s", b.count, b.n, barrierTimeout)
	}
}
