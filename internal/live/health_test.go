package live

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/trace"
)

// The PostgreSQL under a learner's runs killed outright (kill -9 of its
// postmaster): learn starts it again, so a run started at that moment (the
// play screen's r) waits for it, preparing again if the kill met its
// preparation, and runs to its verdict, as does one started once it is
// back; the run the kill cut says that the database went down and that
// learn is starting it again, never a bare connection error.
func TestRunsGoOnAfterTheDatabaseWasKilled(t *testing.T) {
	srv := pgtemptest.OwnCluster(t, pgtemp.Options{})
	rs := NewRuns(t.Context(), Existing(srv))
	defer rs.Close()

	// A run held at its first step, with a transaction open, when the
	// server is killed.
	cut := rs.Start(scenario(t, "lost-answer"), sim.Options{Trace: trace.Options{Stream: true, Gated: true}})
	<-cut.Prepared()
	if err := cut.Err(); err != nil {
		t.Fatal(err)
	}
	for ev := range cut.Events() {
		if ev.Kind.IsStep() {
			break
		}
	}
	changed := srv.HealthChanged()
	if err := syscall.Kill(srv.Health().PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	again := rs.Start(scenario(t, "concurrent-copies"), sim.Options{Copies: 5}) // r, at once
	select {
	case <-changed:
	case <-time.After(30 * time.Second): // a guard against a hang, not a bound
		t.Fatalf("learn never noticed its PostgreSQL was killed: %+v", srv.Health())
	}
	// The cut run goes on, step by step, to its end.
	go func() {
		for range cut.Events() {
		}
	}()
	go func() {
		for cut.Release() == nil {
		}
	}()
	explained := func(what string, err error) {
		t.Helper()
		var down *downError
		if !errors.As(err, &down) || !strings.Contains(err.Error(), "the database went down under the run") || !strings.Contains(err.Error(), "starting it again") {
			t.Errorf("%s: %v; want it to say that the database went down and that learn starts it again", what, err)
		}
	}
	<-cut.Done()
	logResult(t, "the run the kill cut", cut)
	if rep, err := cut.Result(); err != nil {
		explained("the run the kill cut", err)
	} else if rep == nil {
		t.Error("the cut run has neither a report nor an error")
	}
	<-again.Done()
	logResult(t, "the run started at the kill", again)
	if rep, err := again.Result(); err != nil || !rep.Passed() {
		t.Errorf("the run started at the kill: %+v, %v; want it to wait for the restart and pass", rep, err)
	}

	// Once learn has started it again, a run runs as before.
	for srv.Health().State != pgtemp.Up {
		<-srv.HealthChanged()
	}
	if h := srv.Health(); h.Restarts != 1 {
		t.Errorf("health after the kill: %+v, want one restart", h)
	}
	after := rs.Start(scenario(t, "lost-answer"), sim.Options{})
	<-after.Done()
	if rep, err := after.Result(); err != nil || !rep.Passed() {
		t.Errorf("a run after the restart: %+v, %v", rep, err)
	}
}

// logResult logs how run r ended.
func logResult(t *testing.T, what string, r *Run) {
	t.Helper()
	rep, err := r.Result()
	if err != nil {
		t.Logf("%s: %v", what, err)
		return
	}
	var answers []string
	for _, a := range rep.Answers {
		answers = append(answers, fmt.Sprint(a.Status))
	}
	t.Logf("%s: passed %v, answers %v", what, rep.Passed(), answers)
}
