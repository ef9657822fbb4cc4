package sim

import (
	"context"
	"sync"
	"time"
)

// Clock is the time source of a run: the engine's start check, the client's
// backoff and the network's delays all read it, so a run can play at any
// speed in the UI and instantly in tests.
type Clock interface {
	// Now returns the current time of this clock.
	Now() time.Time
	// Sleep waits d on this clock. It returns ctx.Err() if ctx ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is wall-clock time; learn serve uses it.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep blocks for d of real time, or until ctx ends.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FakeClock is simulated time: Sleep returns at once and moves the clock
// forward, so a 1 s backoff costs nothing but still shows as 1 s in the
// trace. Every Sleep moves the clock by its own d, so two intents that back
// off at once add up their waits rather than overlap; scenarios that need a
// precise timeline run their intents one after another. The zero value is not
// usable; call NewFakeClock.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewFakeClock returns a FakeClock that starts at start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

// Now returns the simulated time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep records d and advances the clock by d. It returns
// ctx.Err() without advancing if ctx has already ended.
func (c *FakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	if d > 0 {
		c.now = c.now.Add(d)
	}
	return nil
}

// Advance moves the clock forward by d without a sleeper, as the passing of
// time between two steps of a scenario (an event that starts, a key that
// expires).
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Sleeps returns every duration passed to Sleep, in call order.
func (c *FakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}
