package sim

import (
	"context"
	"sync"
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

// Wait blocks until n callers have called Wait, or ctx ends (then it returns
// ctx.Err()).
func (b *Barrier) Wait(ctx context.Context) error {
	b.mu.Lock()
	b.count++
	if b.count == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
