package live

import (
	"context"
	"errors"
	"testing"

	"github.com/learn-idempotency/learn/internal/pgfault"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
)

// A run whose preparation breaks (the connection dropped while the tables
// are made, or the learner's context ending while the event is inserted)
// reports the cause, and its stage goes: Stopped closes, no run is active,
// and the server holds no schema of it.
func TestRunWhosePreparationBreaksCleansUp(t *testing.T) {
	rows := []struct {
		name string
		rule pgfault.Rule
	}{
		{"connection dropped at CREATE TABLE", pgfault.Rule{Match: "CREATE TABLE", Action: pgfault.Drop}},
		{"stopped at the event's INSERT", pgfault.Rule{Match: "INSERT INTO events", Action: pgfault.Cancel}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			r.rule.Cancel = cancel
			proxy := pgfault.Start(t, testDB.ConnString(), r.rule)
			url, err := proxy.ConnString(testDB.ConnString())
			if err != nil {
				t.Fatal(err)
			}
			srv, err := pgtemp.Start(t.Context(), pgtemp.Options{Mode: pgtemp.URL, DatabaseURL: url})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			rs := NewRuns(ctx, Existing(srv))
			defer rs.Close()
			run := rs.Start(scenario(t, "lost-answer"), sim.Options{})
			<-run.Prepared()
			err = run.Err()
			switch r.rule.Action {
			case pgfault.Drop:
				if err == nil || errors.Is(err, errStopped) {
					t.Errorf("Err() = %v, want the dropped connection", err)
				}
			case pgfault.Cancel:
				if !errors.Is(err, errStopped) {
					t.Errorf("Err() = %v, want %v", err, errStopped)
				}
			}
			<-run.Stopped()
			if !proxy.Fired() {
				t.Errorf("the step was never reached: the test broke nothing")
			}
			if n := rs.Active(); n != 0 {
				t.Errorf("%d runs still active", n)
			}
			if held := srv.Schemas(); len(held) > 0 {
				t.Errorf("schemas left behind: %v", held)
			}
		})
	}
}
