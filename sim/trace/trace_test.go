package trace

import (
	"context"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/sim/clock"
)

// A viewer that stops reading holds up the trace's publishers, never its
// readers: with the stream's buffer full and a publisher waiting to hand
// over one more event, the engine can still read the trace (WaitFor,
// Recorded). Before, the publisher held the trace's lock while it waited,
// and a slow screen looked like a deadlocked engine.
func TestASlowViewerHoldsUpNoReaderOfTheTrace(t *testing.T) {
	tr := New(clock.NewFake(time.Unix(0, 0)), Options{Stream: true})
	full := cap(tr.Events()) + 1
	emitted := make(chan error, 1)
	go func() {
		for i := range full {
			if err := tr.Emit(t.Context(), Event{Kind: KindSQL, Label: "statement"}); err != nil {
				emitted <- err
				return
			}
			_ = i
		}
		emitted <- nil
	}()
	// A guard against a hang, not a bound: the old trace never returned.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := tr.WaitFor(ctx, func(ev Event) bool { return ev.Seq == full }); err != nil {
		t.Fatalf("WaitFor with the viewer's buffer full: %v", err)
	}
	if n := len(tr.Recorded()); n != full {
		t.Errorf("%d events recorded, want %d", n, full)
	}
	select {
	case err := <-emitted:
		t.Fatalf("the last Emit returned (%v) before the viewer read anything", err)
	default:
	}
	// The viewer reads again: every event arrives, in order, and the
	// publisher goes on.
	for i := 1; i <= full; i++ {
		if ev := <-tr.Events(); ev.Seq != i {
			t.Fatalf("event %d arrived as Seq %d", i, ev.Seq)
		}
	}
	if err := <-emitted; err != nil {
		t.Fatal(err)
	}
	tr.Close()
	if _, ok := <-tr.Events(); ok {
		t.Error("the stream is still open after Close")
	}
}
