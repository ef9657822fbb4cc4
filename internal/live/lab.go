package live

import (
	"context"
	"sync"

	"github.com/learn-idempotency/learn/sim"
)

// Lab runs every scenario's world under design d, each in a schema of its
// own and all at once, calls each (when not nil, from its own goroutine,
// one call at a time) with every result as it comes in, and returns the
// scorecard. A scenario that cannot run under d (or that ctx ends first)
// is on the scorecard with why; the others still run.
func (rs *Runs) Lab(ctx context.Context, d sim.Switches, each func(sim.LabResult)) sim.Scorecard {
	var mu sync.Mutex
	var results []sim.LabResult
	var wg sync.WaitGroup
	for _, s := range sim.Scenarios() {
		design := d
		r := rs.Start(s, sim.Options{Design: &design})
		wg.Go(func() {
			select {
			case <-r.Done():
			case <-ctx.Done():
				r.Stop()
				<-r.Done()
			}
			res := labResult(s, r)
			mu.Lock()
			defer mu.Unlock()
			results = append(results, res)
			if each != nil {
				each(res)
			}
		})
	}
	wg.Wait()
	return sim.Score(d, results)
}

// labResult is the scorecard's line for run r of s.
func labResult(s *sim.Scenario, r *Run) sim.LabResult {
	rep, err := r.Result()
	if err != nil {
		return sim.CouldNotRun(s, err)
	}
	return sim.ResultOf(s, rep)
}
