package engine

import (
	"context"
	"errors"
	"go/parser"
	"go/token"
	"strconv"
	"sync"
	"testing"
)

// cancelled is a context that has already ended: Wait with it counts the
// caller as arrived without blocking, so a test can set up a barrier's
// state in order.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// n copies are expected, one never comes (it leaves): the others, real
// goroutines, are released, whichever order they arrive and leave in.
func TestBarrierReleasesTheOthersWhenOneLeaves(t *testing.T) {
	for _, n := range []int{2, 3, 10} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			b := NewBarrier(n)
			errs := make(chan error, n-1)
			var wg sync.WaitGroup
			for range n - 1 {
				wg.Go(func() { errs <- b.Wait(t.Context()) })
			}
			b.Leave() // the copy refused before the pause point
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("Wait = %v, want nil", err)
				}
			}
			if !b.IsOpen() {
				t.Error("every copy arrived or left, and the barrier is closed")
			}
		})
	}
}

// The barrier opens exactly when the last expected copy arrives or leaves,
// and a copy that comes later passes at once, even with an ended context.
func TestBarrierOpensOnTheLastAndLetsLateCopiesPass(t *testing.T) {
	b := NewBarrier(3)
	if err := b.Wait(cancelled()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with an ended context on a closed barrier = %v, want context.Canceled", err)
	}
	if b.IsOpen() {
		t.Fatal("open after 1 of 3 arrived")
	}
	b.Leave()
	if b.IsOpen() {
		t.Fatal("open after 1 of 3 arrived and 1 left")
	}
	done := make(chan error)
	go func() { done <- b.Wait(t.Context()) }() // the last copy
	if err := <-done; err != nil {
		t.Fatalf("last copy: Wait = %v", err)
	}
	if !b.IsOpen() {
		t.Fatal("closed after every copy arrived or left")
	}
	if err := b.Wait(t.Context()); err != nil {
		t.Errorf("late copy: Wait = %v, want nil at once", err)
	}
	if err := b.Wait(cancelled()); err != nil {
		t.Errorf("late copy with an ended context: Wait = %v, want nil: the barrier is open", err)
	}
	b.Leave() // a late leaver changes nothing
	if !b.IsOpen() {
		t.Error("a Leave after opening closed the barrier")
	}
}

// Waiting ends when the waiter's context ends, with ctx.Err(); nothing
// else ends it.
func TestBarrierWaitEndsWithTheContext(t *testing.T) {
	b := NewBarrier(2)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- b.Wait(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Wait = %v, want context.Canceled", err)
	}
	if b.IsOpen() {
		t.Error("a cancelled waiter opened the barrier")
	}
}

func TestNewBarrierForNoCopiesIsOpen(t *testing.T) {
	for _, n := range []int{0, -1} {
		if b := NewBarrier(n); !b.IsOpen() {
			t.Errorf("NewBarrier(%d) is closed", n)
		}
	}
}

// The barrier never consults a clock: a learner may pause a gated run as
// long as they like (issue 9). pause.go imports no time package.
func TestBarrierHasNoClock(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "pause.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			t.Errorf("pause.go imports %s: the barrier must not depend on time", p)
		}
	}
}
