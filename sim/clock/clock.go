// Package clock is the time source of a run, injected everywhere time is
// read: the engine's start check and created_at, the client's backoff, the
// lossy network's delays and the trace's timestamps. [Real] is wall-clock
// time (learn serve); [Fake] is simulated time, where a Sleep returns at
// once and moves the clock, so the lesson's 1 s and 2 s backoffs cost
// nothing in tests and the play screen can run at any speed.
package clock

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
	// SleepFrom waits d that began at from on the sleeper's own timeline:
	// on real time that is Sleep(d); on a Fake, sleepers whose waits began
	// together wake together. It returns ctx.Err() if ctx ends first.
	SleepFrom(ctx context.Context, from time.Time, d time.Duration) error
}

// Real is wall-clock time; learn serve uses it.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// SleepFrom is Sleep(ctx, d): real waits overlap by themselves.
func (r Real) SleepFrom(ctx context.Context, _ time.Time, d time.Duration) error {
	return r.Sleep(ctx, d)
}

// Sleep blocks for d of real time, or until ctx ends.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fake is simulated time: Sleep returns at once and moves the clock
// forward, so a 1 s backoff costs nothing but still shows as 1 s in the
// trace. Every Sleep moves the clock by its own d, so two intents that back
// off at once add up their waits; SleepFrom, given when the sleeper's wait
// began on its own timeline, lets waits that began together overlap (a
// client's retries, Client.Book). The zero value is not usable; call
// NewFake.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewFake returns a Fake clock that starts at start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the simulated time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep records d and advances the clock by d. It returns
// ctx.Err() without advancing if ctx has already ended.
func (c *Fake) Sleep(ctx context.Context, d time.Duration) error {
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

// SleepFrom records d and moves the clock to from+d, or leaves it where it
// is when it is already past that: from is when the sleeper's wait began
// on its own timeline, so that many sleepers that began together wake
// together. It returns ctx.Err() without advancing if ctx has already
// ended.
func (c *Fake) SleepFrom(ctx context.Context, from time.Time, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	if wake := from.Add(d); wake.After(c.now) {
		c.now = wake
	}
	return nil
}

// Advance moves the clock forward by d without a sleeper, as the passing of
// time between two steps of a scenario (an event that starts, a key that
// expires).
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Sleeps returns every duration passed to Sleep, in call order.
func (c *Fake) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}
