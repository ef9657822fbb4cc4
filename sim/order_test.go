package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// slowKeys is a key store whose Put, once the key is stored, runs after
// before returning: a slow report of a SET.
type slowKeys struct {
	api.KeyStore
	after func()
}

func (s slowKeys) Put(ctx context.Context, user string, key uuid.UUID, id int64) error {
	err := s.KeyStore.Put(ctx, user, key, id)
	s.after()
	return err
}

// raceToTell books req twice: first (the writer) is held once its write is
// durable, before the trace is told of it (hold installs the hold); second
// then reads that write. The writer is let go once second has returned or is
// waiting for the writer's write to be told. It returns the recorded trace.
func raceToTell(t *testing.T, tr *trace.Trace, hold func(held func()), first, second func() error) []trace.Event {
	t.Helper()
	durable, release := make(chan struct{}), make(chan struct{})
	hold(func() {
		close(durable)
		<-release
	})
	waiting := make(chan struct{}, 1)
	tr.OnAwait(func(string) {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	firstErr := make(chan error, 1)
	go func() { firstErr <- first() }()
	select {
	case <-durable:
	case err := <-firstErr:
		t.Fatalf("the first request ended before its write: %v", err)
	}
	secondErr := make(chan error, 1)
	go func() { secondErr <- second() }()
	select {
	case <-waiting:
	case err := <-secondErr:
		secondErr <- err
	}
	close(release)
	if err := <-firstErr; err != nil {
		t.Fatal(err)
	}
	if err := <-secondErr; err != nil {
		t.Fatal(err)
	}
	return tr.Recorded()
}

// A copy that finds the booking another copy has just committed tells so
// after that COMMIT, even when the committing copy is slow to tell it: the
// screen shows the database's order.
func TestAReplayIsToldAfterTheCommitItRead(t *testing.T) {
	tr := trace.New(clock.NewFake(time.Now()), trace.Options{})
	st, ev := newStage(t, 10, StageConfig{Trace: tr})
	eng := engineOf(st)
	req := engine.Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
	book := func() error { _, err := eng.BookTicket(t.Context(), req); return err }
	events := raceToTell(t, tr, func(held func()) { eng.OnCommit = held }, book, book)
	commit, found := 0, 0
	for _, e := range events {
		switch {
		case e.Kind == trace.KindCommit && !e.Replayed:
			commit = e.Seq
		case e.Kind == trace.KindLookup && e.Found:
			found = e.Seq
		}
	}
	if commit == 0 || found == 0 || found < commit {
		t.Errorf("the COMMIT is event %d, the lookup that found its booking event %d: %v", commit, found, events)
	}
}

// The same holds for a key store: a copy whose GET finds the key tells so
// after the SET that stored it.
func TestAKeyStoreHitIsToldAfterTheSetItRead(t *testing.T) {
	tr := trace.New(clock.NewFake(time.Now()), trace.Options{})
	st, ev := newStage(t, 10, StageConfig{Trace: tr, Keys: KeysInMemory})
	in := st.Instances[0].API
	req := engine.Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
	book := func() error { _, err := in.Book(t.Context(), req); return err }
	events := raceToTell(t, tr, func(held func()) { in.Keys = slowKeys{in.Keys, held} }, book, book)
	set, hit := 0, 0
	for _, e := range events {
		if e.Kind != trace.KindKeyStore {
			continue
		}
		switch {
		case strings.Contains(e.Text, "now remembers"):
			set = e.Seq
		case e.Label != "memory: key → none":
			hit = e.Seq
		}
	}
	if set == 0 || hit == 0 || hit < set {
		t.Errorf("the SET is event %d, the GET that found it event %d: %v", set, hit, events)
	}
}
