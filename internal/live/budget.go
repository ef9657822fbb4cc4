package live

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Budget shares one PostgreSQL server's connections among the runs of many
// learners (the attendees of a workshop). Before a run builds its stage it
// takes from the budget every connection the stage may hold
// (sim.Scenario.Connections), and it gives them back once the stage is
// removed; so the runs together never hold more than the budget's total,
// and a stage never meets "too many clients" halfway through a scenario.
//
// A run that does not fit waits, and says why (Run.Waiting): the room's
// runs hold too many, or its own learner's runs hold their share already.
// The room's connections go first come, first served: a race of 100 copies
// waiting for them is not overtaken by smaller runs that came after it,
// however long it waits. A run that waits only for its own learner's runs
// holds up nobody else. Its methods are safe for concurrent use.
type Budget struct {
	total, perLearner int

	mu    sync.Mutex
	used  int
	peak  int
	held  map[*Runs]int
	queue []*ticket
}

// ticket is one run waiting for connections.
type ticket struct {
	holder  *Runs
	need    int
	granted chan struct{}
	tell    func(why string)
}

// NewBudget shares total connections among every learner's runs, of which
// one learner's runs may hold at most perLearner at once.
func NewBudget(total, perLearner int) *Budget {
	return &Budget{total: total, perLearner: perLearner, held: map[*Runs]int{}}
}

// BudgetStats is where a budget stands: the connections its runs hold now,
// the most they held at once, its total, and how many runs wait.
type BudgetStats struct {
	Used, Peak, Total, Waiting int
}

// Stats says where the budget stands now.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BudgetStats{Used: b.used, Peak: b.peak, Total: b.total, Waiting: len(b.queue)}
}

// take waits until holder's run may hold need connections and returns the
// function that gives them back (call it once the run's stage is removed).
// While it waits, tell hears why, again whenever that changes, and "" once
// the run has its connections. A need no wait can meet fails at once; ctx
// ending fails with ctx's error, and the run waits no more.
func (b *Budget) take(ctx context.Context, holder *Runs, need int, tell func(string)) (release func(), err error) {
	switch {
	case need > b.total:
		return nil, fmt.Errorf("this run needs %d PostgreSQL connections at once, more than the %d the runs of every learner may hold together: run fewer copies, or give PostgreSQL a higher max_connections", need, b.total)
	case need > b.perLearner:
		return nil, fmt.Errorf("this run needs %d PostgreSQL connections at once, more than the %d one learner's runs may hold: run fewer copies", need, b.perLearner)
	}
	t := &ticket{holder: holder, need: need, granted: make(chan struct{}), tell: tell}
	b.mu.Lock()
	b.queue = append(b.queue, t)
	b.grantLocked()
	b.mu.Unlock()

	select {
	case <-t.granted:
	case <-ctx.Done():
		b.mu.Lock()
		i := slices.Index(b.queue, t)
		if i >= 0 {
			b.queue = slices.Delete(b.queue, i, i+1)
			b.grantLocked() // those behind it may fit now
		}
		b.mu.Unlock()
		if i < 0 { // granted meanwhile: give it back
			b.give(t)
		}
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() { once.Do(func() { b.give(t) }) }, nil
}

// give returns t's connections and lets the waiting runs that fit now go.
func (b *Budget) give(t *ticket) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= t.need
	if b.held[t.holder] -= t.need; b.held[t.holder] <= 0 {
		delete(b.held, t.holder)
	}
	b.grantLocked()
}

// grantLocked lets go, in the order they came, the waiting runs that fit,
// and tells the others why they wait. A run that does not fit the room's
// connections holds up every run behind it; one that waits for its own
// learner's runs holds up nobody.
func (b *Budget) grantLocked() {
	ahead := 0 // runs before this one that wait for the room's connections
	for i := 0; i < len(b.queue); {
		t := b.queue[i]
		mine := b.held[t.holder]
		switch {
		case mine+t.need > b.perLearner:
			t.tell(fmt.Sprintf("waiting for your other runs to end: one learner's runs may hold %d PostgreSQL connections at once, yours hold %d and this one needs %d",
				b.perLearner, mine, t.need))
			i++
		case ahead > 0 || b.used+t.need > b.total:
			what := fmt.Sprintf("waiting for %d PostgreSQL connections: the room's runs hold %d of %d", t.need, b.used, b.total)
			if ahead > 0 {
				what += fmt.Sprintf("; %s ahead of this one", runsAhead(ahead))
			}
			t.tell(what + "; it starts when they end")
			ahead++
			i++
		default:
			b.used += t.need
			b.peak = max(b.peak, b.used)
			b.held[t.holder] += t.need
			b.queue = slices.Delete(b.queue, i, i+1)
			t.tell("")
			close(t.granted)
		}
	}
}

func runsAhead(n int) string {
	if n == 1 {
		return "1 run waits"
	}
	return fmt.Sprintf("%d runs wait", n)
}
