package progress

import (
	"math"
	"testing"
	"time"
)

func TestProgressRecords(t *testing.T) {
	p := &Progress{} // maps not made: methods make them
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.MarkRead("idempotency", at)
	p.MarkRead("idempotency", at.Add(time.Hour))
	if !p.Read["idempotency"].Equal(at) || !p.IsRead("idempotency") || p.IsRead("other") {
		t.Errorf("read %v", p.Read)
	}
	p.Record(setBreakIt, "breakit/redis-ttl", 1.7, at)
	p.Record(setBreakIt, "breakit/last-seats", math.NaN(), at)
	sp := p.Sets[setBreakIt]
	if sp.Answers["breakit/redis-ttl"].Score != 1 || sp.Answers["breakit/last-seats"].Score != 0 {
		t.Errorf("scores not clamped: %+v", sp.Answers)
	}
	p.FinishAttempt(setBreakIt, 0.5)
	p.FinishAttempt(setBreakIt, 0.9)
	p.FinishAttempt(setBreakIt, 0.7)
	if sp.Attempts != 3 || sp.Best != 0.9 || sp.LastScore != 0.7 {
		t.Errorf("attempts %+v", sp)
	}
	p.PassChallenge("lab/last-seats", at)
	p.PassChallenge("lab/last-seats", at.Add(time.Hour))
	if !p.Challenges["lab/last-seats"].Equal(at) {
		t.Errorf("challenges %v: the first pass is kept", p.Challenges)
	}
	if !(Place{}).IsZero() || (Place{Page: PageHome}).IsZero() {
		t.Error("Place.IsZero")
	}
}
