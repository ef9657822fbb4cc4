package live

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/trace"
)

func countRows(ctx context.Context, conn, sql string, args ...any) (int, error) {
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		return 0, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	var n int
	err = c.QueryRow(ctx, sql, args...).Scan(&n)
	return n, err
}

func scenario(t *testing.T, name string) *sim.Scenario {
	t.Helper()
	s, err := sim.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A run waits for nothing but itself: it ends, reports, and removes its
// stage without being stopped.
func TestRunEndsAndRemovesItsStage(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rs := newRuns(t)
	before := testDB.Schemas()
	r := rs.Start(scenario(t, "lost-answer"), sim.Options{})
	<-r.Prepared()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	made := ownSchemas(before...)
	if len(made) != 1 {
		t.Fatalf("a prepared run holds %d schemas, want 1: %v", len(made), made)
	}
	<-r.Done()
	rep, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lost != 1 || rep.BookingRows != 1 || rep.SeatsTaken != 2 || !rep.Passed() {
		t.Errorf("report %+v", rep)
	}
	<-r.Stopped()
	if left := ownSchemas(before...); len(left) != 0 || schemaExists(t, made[0]) {
		t.Errorf("schema %s left after the run ended (held: %v)", made[0], left)
	}
	if n := rs.Active(); n != 0 {
		t.Errorf("%d runs active after the end", n)
	}
	if _, ok := <-r.Events(); ok {
		t.Error("an unstreamed run has events")
	}
	if err := r.Release(); err == nil {
		t.Error("Release after the end succeeded")
	}
}

// pending is a database whose start never finishes: a run on it waits.
func pending() *Postgres {
	return &Postgres{cancel: func() {}, done: make(chan struct{}), progress: "starting"}
}

// Stop is safe at every moment of a run's life: before it has a database,
// while a step is held for the viewer, after it ended, and twice.
func TestStopAtAnyMoment(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Run("waiting for the database", func(t *testing.T) {
		rs := NewRuns(t.Context(), pending())
		r := rs.Start(scenario(t, "lost-answer"), sim.Options{Trace: trace.Options{Stream: true, Gated: true}})
		r.Stop()
		r.Stop()
		<-r.Stopped()
		if !errors.Is(r.Err(), errStopped) {
			t.Errorf("Err = %v, want stopped", r.Err())
		}
		if _, err := r.Result(); !errors.Is(err, errStopped) {
			t.Errorf("Result err = %v, want stopped", err)
		}
		if _, ok := <-r.Events(); ok {
			t.Error("a run stopped before its stage has events")
		}
		if err := r.Release(); err == nil {
			t.Error("Release on a run without a stage succeeded")
		}
		rs.Close()
		rs.Close()
	})
	t.Run("held at a step", func(t *testing.T) {
		rs := newRuns(t)
		before := testDB.Schemas()
		r := rs.Start(scenario(t, "lost-answer"), sim.Options{Trace: trace.Options{Stream: true, Gated: true}})
		<-r.Prepared()
		var steps int
		for ev := range r.Events() {
			if !ev.Kind.IsStep() {
				continue
			}
			steps++
			if steps == 3 {
				r.Stop() // the engine holds its lookup step inside the transaction
				continue
			}
			if err := r.Release(); err != nil && steps < 3 {
				t.Fatalf("release step %d: %v", steps, err)
			}
		}
		<-r.Done()
		if _, err := r.Result(); !errors.Is(err, errStopped) {
			t.Errorf("Result err = %v, want stopped", err)
		}
		<-r.Stopped()
		if left := ownSchemas(before...); len(left) != 0 {
			t.Errorf("schemas left: %v", left)
		}
		r.Stop()
	})
	t.Run("right after start", func(t *testing.T) {
		rs := newRuns(t)
		before := testDB.Schemas()
		for range 10 {
			r := rs.Start(scenario(t, "concurrent-copies"), sim.Options{Copies: 5, Trace: trace.Options{Stream: true, Gated: true}})
			r.Stop()
			<-r.Stopped()
		}
		if left := ownSchemas(before...); len(left) != 0 {
			t.Errorf("schemas left: %v", left)
		}
	})
}

// What pressing r, v or Enter many times quickly does to a screen: each
// press stops the run it had and starts another. Only the newest may hold a
// stage, and closing the owner leaves nothing, not a goroutine.
func TestQuickRestartsLeaveOneRunAtMost(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	before := testDB.Schemas()
	rs := NewRuns(t.Context(), Existing(testDB))
	var last *Run
	var stopped []*Run
	for i := range 40 {
		if last != nil {
			last.Stop()
			stopped = append(stopped, last)
		}
		name := []string{"lost-answer", "key-reuse-two-events", "concurrent-copies"}[i%3]
		last = rs.Start(scenario(t, name), sim.Options{Variant: sim.Broken, Trace: trace.Options{Stream: true, Gated: true}})
	}
	for _, r := range stopped {
		<-r.Stopped()
	}
	<-last.Prepared()
	if err := last.Err(); err != nil {
		t.Fatal(err)
	}
	if n := rs.Active(); n != 1 {
		t.Errorf("%d runs active, want only the newest", n)
	}
	if held := ownSchemas(before...); len(held) != 1 {
		t.Errorf("%d schemas held, want the newest run's only: %v", len(held), held)
	}
	rs.Close()
	if n := rs.Active(); n != 0 {
		t.Errorf("%d runs active after Close", n)
	}
	if held := ownSchemas(before...); len(held) != 0 {
		t.Errorf("schemas left after Close: %v", held)
	}
	if r := rs.Start(scenario(t, "lost-answer"), sim.Options{}); !errors.Is(r.Err(), errStopped) {
		t.Errorf("a run started after Close: %v", r.Err())
	}
}

// Ids are unique in the process, whichever owner started the run.
func TestIDsAreUniqueInTheProcess(t *testing.T) {
	a, b := NewRuns(t.Context(), pending()), NewRuns(t.Context(), pending())
	seen := map[ID]bool{}
	for range 5 {
		for _, rs := range []*Runs{a, b} {
			r := rs.Start(scenario(t, "lost-answer"), sim.Options{})
			if seen[r.ID()] {
				t.Fatalf("id %d given twice", r.ID())
			}
			seen[r.ID()] = true
		}
	}
	a.Close()
	b.Close()
}

// Stepping a gated run to its end, one Release per step, as the play
// screen does.
func TestGatedRunStepsToItsEnd(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rs := newRuns(t)
	r := rs.Start(scenario(t, "lost-answer"), sim.Options{Trace: trace.Options{Stream: true, Gated: true}})
	<-r.Prepared()
	if len(r.Lanes()) != 3 || r.Setup().Seats != 10 {
		t.Errorf("lanes %v, setup %+v", r.Lanes(), r.Setup())
	}
	steps := 0
	for ev := range r.Events() {
		if !ev.Kind.IsStep() {
			continue
		}
		steps++
		rows, err := r.Rows(t.Context())
		if err != nil {
			t.Fatalf("rows at step %d: %v", steps, err)
		}
		if len(rows.Events) != 1 {
			t.Fatalf("rows at step %d: %+v", steps, rows)
		}
		if err := r.Release(); err != nil {
			t.Fatalf("release step %d: %v", steps, err)
		}
	}
	<-r.Done()
	rep, err := r.Result()
	if err != nil || !rep.Passed() || len(rep.Answers) != 1 || !rep.Answers[0].Replayed {
		t.Fatalf("report %+v, %v", rep, err)
	}
	if steps != 12 {
		t.Errorf("%d steps, want the lesson's 12", steps)
	}
	<-r.Stopped()
	if _, err := r.Rows(t.Context()); err == nil {
		t.Error("rows read after the stage was removed")
	}
}
