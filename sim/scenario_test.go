package sim

import (
	"context"
	"slices"
	"testing"
)

func runScenario(t *testing.T, name string, opts Options) *Report {
	t.Helper()
	s, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.Prepare(t.Context(), testDB, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := run.Close(); err != nil {
			t.Errorf("close run: %v", err)
		}
	}()
	rep, err := run.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestLostAnswerScenario(t *testing.T) {
	rep := runScenario(t, "lost-answer", Options{})
	if len(rep.Answers) != 1 || rep.Answers[0].Status != 200 || !rep.Answers[0].Replayed || rep.Answers[0].BookingID == nil {
		t.Fatalf("answers = %+v, want one 200 replay", rep.Answers)
	}
	if rep.Lost != 1 || rep.BookingRows != 1 || rep.SeatsTaken != 2 {
		t.Errorf("lost=%d rows=%d seats=%d, want 1, 1, 2", rep.Lost, rep.BookingRows, rep.SeatsTaken)
	}
	if len(rep.Attempts) != 1 || len(rep.Attempts[0].Tries) != 2 || rep.Attempts[0].Tries[0].Error == "" {
		t.Errorf("attempts = %+v, want one intent with a failed try then a 200", rep.Attempts)
	}
}

func TestConcurrentCopiesScenario(t *testing.T) {
	for _, copies := range []int{2, 10, 40} {
		rep := runScenario(t, "concurrent-copies", Options{Copies: copies})
		ids := map[string]bool{}
		created := 0
		for _, a := range rep.Answers {
			if a.Status != 200 || a.BookingID == nil {
				t.Fatalf("copies=%d: answer %+v", copies, a)
			}
			ids[*a.BookingID] = true
			if !a.Replayed {
				created++
			}
		}
		if len(rep.Answers) != copies || len(ids) != 1 || created != 1 {
			t.Errorf("copies=%d: %d answers, %d ids, %d created", copies, len(rep.Answers), len(ids), created)
		}
		if rep.Lost != 0 || rep.BookingRows != 1 || rep.SeatsTaken != 2 {
			t.Errorf("copies=%d: lost=%d rows=%d seats=%d", copies, rep.Lost, rep.BookingRows, rep.SeatsTaken)
		}
	}
}

func TestPrepareRefusesBadOptions(t *testing.T) {
	s, _ := Lookup("concurrent-copies")
	for _, opts := range []Options{{Copies: 1}, {Copies: MaxCopies + 1}, {Variant: Broken}} {
		if _, err := s.Prepare(t.Context(), testDB, opts); err == nil {
			t.Errorf("Prepare(%+v) succeeded", opts)
		}
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup(nope) succeeded")
	}
}

// A gated trace stops on every step until released; the lost-answer run
// goes through the lesson's sequence in order.
func TestGatedTraceStepsThroughTheLostAnswerSequence(t *testing.T) {
	s, _ := Lookup("lost-answer")
	run, err := s.Prepare(t.Context(), testDB, Options{Trace: TraceOptions{Stream: true, Gated: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := run.Execute(ctx)
		done <- err
	}()
	var steps []string
	for ev := range run.Trace.Events() {
		if !ev.Kind.IsStep() {
			continue
		}
		label := string(ev.Kind)
		if ev.Lost {
			label += "(lost)"
		}
		if ev.Found {
			label += "(found)"
		}
		steps = append(steps, label)
		// The committed rows seen between steps: the booking is visible
		// from the commit on.
		rows, err := run.Rows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == KindWrite && len(rows.Bookings) != 0 {
			t.Errorf("booking visible before COMMIT: %+v", rows.Bookings)
		}
		if err := run.Trace.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"send", "lock", "lookup", "write", "commit", "answer(lost)", "wait",
		"send", "lock", "lookup(found)", "commit", "answer"}
	if !slices.Equal(steps, want) {
		t.Errorf("steps =\n %v\nwant\n %v", steps, want)
	}
}
