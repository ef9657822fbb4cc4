package story

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/internal/ui/components/seqdiag"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/trace"
)

var testDB *pgtemp.Server

func TestMain(m *testing.M) { os.Exit(pgtemptest.Main(m, "internal/ui/components/story", &testDB)) }

// trace runs a scenario on PostgreSQL and returns its events.
func runTrace(t *testing.T, name string, v sim.Variant, copies int) []trace.Event {
	t.Helper()
	s, err := sim.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.Prepare(t.Context(), sim.DatabaseOf(testDB.NewSchema), sim.Options{Variant: v, Copies: copies})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if _, err := run.Execute(t.Context()); err != nil {
		t.Fatal(err)
	}
	return run.Trace.Recorded()
}

func labels(as []seqdiag.Arrow) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Label
	}
	return out
}

// The lost answer tells the lesson's six lines: book with K, booked and
// committed, the answer lost, the retry with K, the key found and nothing
// written, the same booking back.
func TestTheLostAnswerIsTheLessonsPicture(t *testing.T) {
	got := Tell(runTrace(t, "lost-answer", sim.Correct, 0))
	want := []struct {
		from, to, has string
		lost          bool
	}{
		{Browser, Server, "ada: book 2, key", false},
		{Server, Server, "booked b1, COMMIT", false},
		{Server, Browser, "200 b1 (lost)", true},
		{Browser, Server, "retry after 1s: book 2, key", false},
		{Server, Server, "key has b1, write nothing", false},
		{Server, Browser, "200 b1 (replay)", false},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), strings.Join(labels(got), "\n"))
	}
	for i, w := range want {
		g := got[i]
		if g.From != w.from || g.To != w.to || !strings.Contains(g.Label, w.has) || g.Lost != w.lost {
			t.Errorf("line %d = %+v, want %s→%s %q lost=%v", i+1, g, w.from, w.to, w.has, w.lost)
		}
	}
}

// Copies that met the same fate are told once, with their count and the
// range of their booking ids: ten copies are a handful of lines.
func TestCopiesAreToldOnce(t *testing.T) {
	correct := labels(Tell(runTrace(t, "concurrent-copies", sim.Correct, 10)))
	if len(correct) != 6 || !strings.HasPrefix(correct[0], "copy ") || !strings.HasPrefix(correct[3], "9 copies: ") ||
		!strings.Contains(correct[5], "9 × 200 b1 (replay)") {
		t.Errorf("correct copies:\n%s", strings.Join(correct, "\n"))
	}
	broken := labels(Tell(runTrace(t, "concurrent-copies", sim.Broken, 10)))
	if len(broken) != 3 || !strings.HasPrefix(broken[0], "10 copies: ") || !strings.Contains(broken[1], "booked b1–b10") {
		t.Errorf("broken copies:\n%s", strings.Join(broken, "\n"))
	}
}

// The longest story, keys in Redis with a crash and a day's wait, still
// fits the play screen at 80x24 in a handful of lines, and keeps the
// world's notes.
func TestTheLongestStoryIsShort(t *testing.T) {
	got := labels(Tell(runTrace(t, "redis-ttl", sim.Broken, 0)))
	text := strings.Join(got, "\n")
	if len(got) > 16 || !strings.Contains(text, "25 hours pass") || !strings.Contains(text, "dies after COMMIT") {
		t.Errorf("%d lines:\n%s", len(got), text)
	}
}

// A note at which learn moved its simulated clock says so ("25 hours pass
// (simulated clock)"); a note that comes right after a backoff wait, when
// the clock has moved only by that wait, does not ("meanwhile: ben books
// 2"), nor does any other line.
func TestTimePassingIsLabelledSimulated(t *testing.T) {
	redis := runTrace(t, "redis-ttl", sim.Broken, 0)
	jumps := 0
	for i, ev := range redis {
		if d := ClockJump(redis, i); d != 0 {
			jumps++
			if ev.Kind != trace.KindNote || d != 25*time.Hour || ev.Label != "25 hours pass" {
				t.Errorf("the clock jumps %s at %+v", d, ev)
			}
		}
	}
	if jumps != 1 {
		t.Errorf("%d jumps of the clock in redis-ttl, want 1", jumps)
	}
	if text := strings.Join(labels(Tell(redis)), "\n"); !strings.Contains(text, "25 hours pass (simulated clock)") {
		t.Errorf("the story does not say the 25 hours are simulated:\n%s", text)
	}
	for _, name := range []string{"replay-after-sellout", "retries-exhausted", "crash-before-commit"} {
		events := runTrace(t, name, sim.Correct, 0)
		notes := 0
		for i, ev := range events {
			if ev.Kind == trace.KindNote {
				notes++
			}
			if d := ClockJump(events, i); d != 0 {
				t.Errorf("%s: the clock jumps %s at %q, where no time was let pass", name, d, ev.Label)
			}
		}
		if text := strings.Join(labels(Tell(events)), "\n"); notes == 0 || strings.Contains(text, SimulatedClock) {
			t.Errorf("%s: %d notes, story:\n%s", name, notes, text)
		}
	}
}
