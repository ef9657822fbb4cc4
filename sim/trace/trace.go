package trace

import (
	"context"
	"sync"
	"time"

	"github.com/learn-idempotency/learn/sim/clock"
)

// Options configure a Trace.
type Options struct {
	// Stream publishes every event on the channel returned by Events.
	Stream bool
	// Gated makes each step event wait until Release is called, one step at
	// a time, so a viewer can play, pause and step a live run. SQL and log
	// events never wait.
	Gated bool
}

// Trace collects the events of one run. Emit is safe from many goroutines;
// events get their Seq in the order they are emitted.
type Trace struct {
	clock   clock.Clock
	start   time.Time
	opts    Options
	ch      chan Event
	turn    chan struct{} // holds a token while a gated step waits
	release chan struct{}

	// sending is held by the publisher handing events to the stream's
	// channel, in Seq order (flush): mu is not held meanwhile, so a viewer
	// that reads slowly holds up publishers only, never a reader of the
	// trace (Recorded, WaitFor, AwaitWrites). sent counts the events
	// handed over (under mu); chClosed is set under sending.
	sending  sync.Mutex
	sent     int
	chClosed bool

	mu      sync.Mutex
	seq     int
	events  []Event
	closed  bool
	changed chan struct{} // closed and replaced at every event

	// inFlight holds, per idempotency key, one channel for every write of
	// that key that the database has made (or is making) but the trace has
	// not told yet; each is closed when its write is told or abandoned.
	inFlight map[string][]chan struct{}
	// awaiting is OnAwait's function.
	awaiting func(key string)
}

// OnAwait sets f to be called, with the key, each time a reader begins to
// wait in AwaitWrites for a write in flight: a test knows so that a reader
// waits, without waiting for a while. Set it before the trace is used.
func (t *Trace) OnAwait(f func(key string)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.awaiting = f
}

// New returns a trace whose times are measured on clk from now.
func New(clk clock.Clock, opts Options) *Trace {
	t := &Trace{clock: clk, start: clk.Now(), opts: opts, changed: make(chan struct{})}
	if opts.Stream {
		t.ch = make(chan Event, 4096)
	}
	if opts.Gated {
		t.turn = make(chan struct{}, 1)
		t.release = make(chan struct{})
	}
	return t
}

// Events returns the stream of events, closed by Close; nil unless the trace
// was made with Stream.
func (t *Trace) Events() <-chan Event { return t.ch }

// Emit stamps ev with its Seq and time (and, if ev.Intent is 0, the Attempt
// in ctx), records it and publishes it. In a
// gated trace a step event then waits for Release. It returns ctx.Err() if
// ctx ends first, which callers treat as the run being abandoned. A nil Trace
// discards events.
func (t *Trace) Emit(ctx context.Context, ev Event) error {
	if t == nil {
		return nil
	}
	if ev.Intent == 0 {
		a := AttemptFrom(ctx)
		ev.Intent, ev.Copy, ev.Try = a.Intent, a.Copy, a.Try
	}
	if !t.opts.Gated || !ev.Kind.IsStep() {
		return t.publish(ctx, ev)
	}
	select {
	case t.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-t.turn }()
	if err := t.publish(ctx, ev); err != nil {
		return err
	}
	select {
	case <-t.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *Trace) publish(ctx context.Context, ev Event) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.seq++
	ev.Seq = t.seq
	ev.At = t.clock.Now().Sub(t.start)
	t.events = append(t.events, ev)
	close(t.changed)
	t.changed = make(chan struct{})
	t.mu.Unlock()
	if t.ch == nil {
		return nil
	}
	return t.flush(ctx)
}

// flush hands every recorded event not yet on the stream's channel to it,
// in Seq order, waiting while the viewer's buffer is full; it returns once
// the caller's own event is handed over (by it or by the publisher before
// it), or ctx.Err() when ctx ends first.
func (t *Trace) flush(ctx context.Context) error {
	t.sending.Lock()
	defer t.sending.Unlock()
	for {
		t.mu.Lock()
		if t.chClosed || t.sent >= len(t.events) {
			t.mu.Unlock()
			return nil
		}
		ev := t.events[t.sent]
		t.mu.Unlock()
		select {
		case t.ch <- ev:
			t.mu.Lock()
			t.sent++
			t.mu.Unlock()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Release lets the step that is waiting in a gated trace go on. It blocks
// until a step is waiting or ctx ends; it returns ctx.Err() in that case.
func (t *Trace) Release(ctx context.Context) error {
	select {
	case t.release <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends the stream: later events are dropped and the Events channel is
// closed. Call it once every emitter has returned. Safe to call twice.
func (t *Trace) Close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	close(t.changed)
	t.changed = make(chan struct{})
	t.mu.Unlock()
	if t.ch != nil {
		// After the publisher handing over events, if one is.
		t.sending.Lock()
		t.chClosed = true
		close(t.ch)
		t.sending.Unlock()
	}
}

// WaitFor waits until an event that ok accepts has been recorded (at once
// when one is there already), the trace is closed, or ctx ends (it returns
// ctx.Err()). A nil Trace records nothing and returns at once. The engine
// uses it so that the trace, and so the screen, tells things in the order
// the database did them: the loser of a unique violation is told after the
// winner's COMMIT, never before.
func (t *Trace) WaitFor(ctx context.Context, ok func(Event) bool) error {
	if t == nil {
		return nil
	}
	seen := 0
	for {
		t.mu.Lock()
		for _, ev := range t.events[seen:] {
			if ok(ev) {
				t.mu.Unlock()
				return nil
			}
		}
		seen = len(t.events)
		if t.closed {
			t.mu.Unlock()
			return nil
		}
		changed := t.changed
		t.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Writing marks a write of key as in flight: the caller is about to make it
// durable (COMMIT, or a key store's SET) and will tell it next. The returned
// done clears the mark; it is safe to call more than once, and the caller
// must call it on every path (defer it): once the write is told, or when it
// is abandoned (an error, a crash, a cancelled run), so that no reader waits
// for it forever. A nil Trace marks nothing.
func (t *Trace) Writing(key string) (done func()) {
	if t == nil {
		return func() {}
	}
	c := make(chan struct{})
	t.mu.Lock()
	if t.inFlight == nil {
		t.inFlight = map[string][]chan struct{}{}
	}
	t.inFlight[key] = append(t.inFlight[key], c)
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			cs := t.inFlight[key]
			for i := range cs {
				if cs[i] == c {
					cs = append(cs[:i:i], cs[i+1:]...)
					break
				}
			}
			if len(cs) == 0 {
				delete(t.inFlight, key)
			} else {
				t.inFlight[key] = cs
			}
			t.mu.Unlock()
			close(c)
		})
	}
}

// AwaitWrites waits until no write of key marked by Writing is in flight,
// or ctx ends (it returns ctx.Err()). A reader that found key's booking
// calls it before telling so: the write it read is told first, and the
// screen keeps the database's order. A nil Trace returns at once.
func (t *Trace) AwaitWrites(ctx context.Context, key string) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	cs := append([]chan struct{}(nil), t.inFlight[key]...)
	awaiting := t.awaiting
	t.mu.Unlock()
	if len(cs) > 0 && awaiting != nil {
		awaiting(key)
	}
	for _, c := range cs {
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Recorded returns a copy of every event so far, in Seq order.
func (t *Trace) Recorded() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Event(nil), t.events...)
}
