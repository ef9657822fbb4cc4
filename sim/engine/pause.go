package engine

import (
	"context"
	"sync"
)

// Barrier forces an interleaving of concurrent copies: it holds every
// caller of Wait until each of the n callers it expects has either arrived
// or left, then lets them all go ("both copies have looked up the key,
// then both insert"). It opens once and stays open.
//
// It never depends on the clock, so a learner may pause a gated run for
// as long as they like: a copy that will never arrive (refused before the
// pause point, a replay found at the lookup, an error) calls Leave, and
// the barrier waits for one fewer; a caller that comes after it opened
// passes at once. Safe for concurrent use.
type Barrier struct {
	mu       sync.Mutex
	expected int // callers that have not left: arrived or still to come
	arrived  int
	opened   bool
	open     chan struct{}
}

// NewBarrier returns a barrier for n callers; n < 1 gives an open one.
func NewBarrier(n int) *Barrier {
	b := &Barrier{expected: n, open: make(chan struct{})}
	b.openIfAllThere()
	return b
}

// Wait counts the caller as arrived and blocks until every expected caller
// has arrived or left. It returns nil once the barrier is open (at once if
// it already was), or ctx.Err() if ctx ends first; the caller still counts
// as arrived then.
func (b *Barrier) Wait(ctx context.Context) error {
	b.mu.Lock()
	if !b.opened {
		b.arrived++
		b.openIfAllThere()
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return nil
	default:
	}
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Leave says that one of the expected callers will not call Wait: the
// barrier then waits for one fewer, and opens if everyone else is there.
// After the barrier opened, Leave does nothing.
func (b *Barrier) Leave() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.opened {
		b.expected--
		b.openIfAllThere()
	}
}

// IsOpen reports whether the barrier has let its callers go.
func (b *Barrier) IsOpen() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opened
}

// openIfAllThere opens the barrier when every expected caller has
// arrived; b.mu is held.
func (b *Barrier) openIfAllThere() {
	if !b.opened && b.arrived >= b.expected {
		b.opened = true
		close(b.open)
	}
}
