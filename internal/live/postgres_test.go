package live

import (
	"context"
	"errors"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
)

// LaunchAfter starts nothing until its channel closes, and Close before
// that gives the start up without ever starting it.
func TestLaunchAfterWaitsAndCloseGivesUp(t *testing.T) {
	after := make(chan struct{})
	// URL mode on the test server: a start that would succeed at once.
	p := LaunchAfter(pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: testDB.ConnString()}, after)
	if ready, err, _ := p.Status(); ready || err != nil {
		t.Fatalf("before the channel closed: ready %v, err %v; want the start still waiting", ready, err)
	}
	select {
	case <-p.Done():
		t.Fatal("the start finished before the channel closed")
	default:
	}
	close(after)
	if _, err := p.Wait(t.Context()); err != nil {
		t.Fatalf("after the channel closed: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	never := LaunchAfter(pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: testDB.ConnString()}, make(chan struct{}))
	_ = never.Close()
	<-never.Done()
	if _, err, _ := never.Status(); !errors.Is(err, context.Canceled) {
		t.Errorf("closed before its start: err %v, want context.Canceled", err)
	}
}
