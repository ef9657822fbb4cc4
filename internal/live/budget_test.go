package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/trace"
)

// taking is a take under way on its own goroutine: what it was told, in
// order, and its result.
type taking struct {
	told    chan string
	done    chan struct{}
	release func()
	err     error
}

func startTake(ctx context.Context, b *Budget, holder *Runs, need int) *taking {
	tk := &taking{told: make(chan string, 64), done: make(chan struct{})}
	go func() {
		defer close(tk.done)
		tk.release, tk.err = b.take(ctx, holder, need, func(why string) { tk.told <- why })
	}()
	return tk
}

// waitTold waits until the take is told want, skipping what came before.
func (tk *taking) waitTold(t *testing.T, want string) {
	t.Helper()
	var heard []string
	for {
		select {
		case why := <-tk.told:
			if why == want {
				return
			}
			heard = append(heard, why)
		case <-tk.done:
			// Told, then ended: what it heard last is still buffered, and
			// select picks among ready cases at random.
			for len(tk.told) > 0 {
				if why := <-tk.told; why == want {
					return
				} else {
					heard = append(heard, why)
				}
			}
			t.Fatalf("the take ended (err %v) before it was told %q; it heard %q", tk.err, want, heard)
		}
	}
}

// granted waits for the take to end and fails unless it got its
// connections.
func (tk *taking) granted(t *testing.T) func() {
	t.Helper()
	<-tk.done
	if tk.err != nil {
		t.Fatalf("take: %v", tk.err)
	}
	return tk.release
}

func takeNow(t *testing.T, b *Budget, holder *Runs, need int) func() {
	t.Helper()
	release, err := b.take(t.Context(), holder, need, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	return release
}

// The room's connections go first come, first served: a small run that
// would fit waits behind a big one that does not, and both go when the
// connections come back.
func TestBudgetIsFirstComeFirstServed(t *testing.T) {
	b := NewBudget(10, 10)
	a, big, small := &Runs{}, &Runs{}, &Runs{}
	releaseA := takeNow(t, b, a, 8)
	bigTake := startTake(t.Context(), b, big, 5)
	bigTake.waitTold(t, "waiting for 5 PostgreSQL connections: the room's runs hold 8 of 10; it starts when they end")
	smallTake := startTake(t.Context(), b, small, 2)
	smallTake.waitTold(t, "waiting for 2 PostgreSQL connections: the room's runs hold 8 of 10; 1 run waits ahead of this one; it starts when they end")
	if s := b.Stats(); s.Waiting != 2 || s.Used != 8 {
		t.Fatalf("Stats = %+v, want 8 used and 2 waiting", s)
	}
	releaseA()
	bigTake.waitTold(t, "")
	defer bigTake.granted(t)()
	defer smallTake.granted(t)()
	if s := b.Stats(); s != (BudgetStats{Used: 7, Peak: 8, Total: 10}) {
		t.Errorf("Stats = %+v, want 7 used, peak 8, none waiting", s)
	}
	releaseA() // a second call gives nothing back twice
	if s := b.Stats(); s.Used != 7 {
		t.Errorf("a release called twice gave back twice: %+v", s)
	}
}

// A learner whose runs hold their share waits for them, and holds up
// nobody else.
func TestBudgetCapsEachLearner(t *testing.T) {
	b := NewBudget(100, 8)
	x, y := &Runs{}, &Runs{}
	releaseX := takeNow(t, b, x, 5)
	second := startTake(t.Context(), b, x, 4)
	second.waitTold(t, "waiting for your other runs to end: one learner's runs may hold 8 PostgreSQL connections at once, yours hold 5 and this one needs 4")
	takeNow(t, b, y, 8)() // not held up by x's wait
	releaseX()
	second.granted(t)()
	if s := b.Stats(); s.Used != 0 || s.Waiting != 0 {
		t.Errorf("Stats = %+v after every release, want nothing used or waiting", s)
	}
}

// A need no wait can meet fails at once with what to do; a wait that is
// given up leaves no trace and holds up nobody.
func TestBudgetRefusesWhatCannotFitAndForgetsWhatIsGivenUp(t *testing.T) {
	b := NewBudget(10, 6)
	for need, want := range map[int]string{11: "more than the 10 the runs of every learner may hold together", 7: "more than the 6 one learner's runs may hold"} {
		_, err := b.take(t.Context(), &Runs{}, need, func(string) {})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "run fewer copies") {
			t.Errorf("take(%d) = %v, want an error saying %q and what to do", need, err, want)
		}
	}
	release := takeNow(t, b, &Runs{}, 6)
	ctx, cancel := context.WithCancel(t.Context())
	gaveUp := startTake(ctx, b, &Runs{}, 6)
	gaveUp.waitTold(t, "waiting for 6 PostgreSQL connections: the room's runs hold 6 of 10; it starts when they end")
	cancel()
	<-gaveUp.done
	if !errors.Is(gaveUp.err, context.Canceled) {
		t.Fatalf("a cancelled take = %v, want context.Canceled", gaveUp.err)
	}
	takeNow(t, b, &Runs{}, 4)() // not held up by the wait given up
	release()
	if s := b.Stats(); s.Used != 0 || s.Waiting != 0 {
		t.Errorf("Stats = %+v, want nothing used or waiting", s)
	}
}

// A room of learners racing 100 copies each, more than the server could
// hold at once: every race waits its turn and books exactly once, and the
// runs never held more connections than the budget.
func TestRoomRacingOneHundredCopiesEachWaitsItsTurn(t *testing.T) {
	race, err := sim.Lookup("concurrent-copies")
	if err != nil {
		t.Fatal(err)
	}
	opts := sim.Options{Copies: sim.MaxCopies}
	need := race.Connections(opts)
	limit, err := testDB.ConnectionLimit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	total := min(2*need+10, limit-sim.ConnSpare-1) // two races at a time, at most
	db := Existing(testDB)
	b := NewBudget(total, need+8)
	db.SetBudget(b)
	const learners = 8
	var wg sync.WaitGroup
	reports := make([]*sim.Report, learners)
	errs := make([]error, learners)
	for i := range learners {
		rs := NewRuns(t.Context(), db)
		defer rs.Close()
		r := rs.Start(race, opts)
		wg.Go(func() {
			<-r.Stopped() // its connections are back once its stage is removed
			reports[i], errs[i] = r.Result()
		})
	}
	wg.Wait()
	for i, rep := range reports {
		if errs[i] != nil {
			t.Errorf("learner %d: %v", i, errs[i])
			continue
		}
		if rep.BookingRows != 1 || rep.SeatsTaken != 2 || len(rep.Answers) != sim.MaxCopies {
			t.Errorf("learner %d: %d booking rows, %d seats taken, %d answers; want 1, 2, %d", i, rep.BookingRows, rep.SeatsTaken, len(rep.Answers), sim.MaxCopies)
		}
		for _, a := range rep.Answers {
			if a.Status != 200 {
				t.Errorf("learner %d: an answer of %d", i, a.Status)
				break
			}
		}
	}
	s := b.Stats()
	if s.Peak > total || s.Peak < need || s.Used != 0 || s.Waiting != 0 {
		t.Errorf("Stats = %+v: want a peak from %d to %d, nothing used or waiting at the end", s, need, total)
	}
	if learners*need <= total {
		t.Fatalf("the room (%d × %d) fits the budget (%d): nothing here had to wait", learners, need, total)
	}
}

// A run that waits for connections says so on its Waiting line until it
// has them; a run held for its viewer keeps its connections meanwhile.
func TestRunSaysWhyItWaits(t *testing.T) {
	lost, err := sim.Lookup("lost-answer")
	if err != nil {
		t.Fatal(err)
	}
	need := lost.Connections(sim.Options{})
	db := Existing(testDB)
	db.SetBudget(NewBudget(need, need))
	first, second := NewRuns(t.Context(), db), NewRuns(t.Context(), db)
	defer first.Close()
	defer second.Close()
	held := first.Start(lost, sim.Options{Trace: trace.Options{Stream: true, Gated: true}})
	<-held.Prepared()
	if err := held.Err(); err != nil {
		t.Fatal(err)
	}
	waiting := second.Start(lost, sim.Options{})
	want := fmt.Sprintf("waiting for %d PostgreSQL connections: the room's runs hold %d of %d; it starts when they end", need, need, need)
	for waiting.Waiting() != want {
		select {
		case <-waiting.Prepared():
			t.Fatalf("the second run got its stage (err %v) while the first held every connection", waiting.Err())
		case <-time.After(time.Millisecond): // polling for the line, not waiting for a while
		}
	}
	held.Stop()
	<-waiting.Done()
	if _, err := waiting.Result(); err != nil || waiting.Waiting() != "" {
		t.Errorf("after the first run stopped: result error %v, Waiting %q; want a result and no wait", err, waiting.Waiting())
	}
}
