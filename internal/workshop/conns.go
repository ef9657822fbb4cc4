package workshop

import (
	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
)

// Connections of one attendee's runs, from the scenarios themselves.
var (
	// raceConns is what a race of sim.MaxCopies copies holds.
	raceConns = func() int {
		s, _ := sim.Lookup("concurrent-copies")
		return s.Connections(sim.Options{Copies: sim.MaxCopies})
	}()
	// runConns is the most any other run holds (two API instances…).
	runConns = func() int {
		most := 0
		for _, s := range sim.Scenarios() {
			if s.Copies {
				continue
			}
			for _, v := range []sim.Variant{sim.Correct, sim.Broken} {
				if v == sim.Broken && !s.HasBroken() {
					continue
				}
				most = max(most, s.Connections(sim.Options{Variant: v}))
			}
		}
		return most
	}()
)

// MaxConnectionsFor is the max_connections a workshop's own PostgreSQL
// gets for a room of attendees: every attendee on a play screen at once, two
// races of sim.MaxCopies copies beside them (more races wait their turn),
// the connections learn keeps spare, and a few for the superuser and psql;
// never less than pgtemp's default.
func MaxConnectionsFor(attendees int) int {
	const superuser, psql = 3, 5
	return max(pgtemp.DefaultMaxConnections, attendees*runConns+2*raceConns+sim.ConnSpare+1+superuser+psql)
}

// budgetFor shares limit connections (what the server lets learn hold)
// among the attendees' runs: all of them but learn's spare and the one the
// schemas are made over, or share when it is less (0: no share); one
// attendee's runs may hold a race of sim.MaxCopies copies and one other
// run at once.
func budgetFor(limit, share int) *live.Budget {
	total := limit - sim.ConnSpare - 1
	if share > 0 {
		total = min(total, share)
	}
	return live.NewBudget(total, min(total, raceConns+runConns))
}
