package quiz

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
	p.Record(SetBreakIt, "breakit/redis-ttl", 1.7, at)
	p.Record(SetBreakIt, "breakit/last-seats", math.NaN(), at)
	sp := p.Sets[SetBreakIt]
	if sp.Answers["breakit/redis-ttl"].Score != 1 || sp.Answers["breakit/last-seats"].Score != 0 {
		t.Errorf("scores not clamped: %+v", sp.Answers)
	}
	p.FinishAttempt(SetBreakIt, 0.5)
	p.FinishAttempt(SetBreakIt, 0.9)
	p.FinishAttempt(SetBreakIt, 0.7)
	if sp.Attempts != 3 || sp.Best != 0.9 || sp.LastScore != 0.7 {
		t.Errorf("attempts %+v", sp)
	}
	r := p.Rate("counter/redis-set-nx", Easy, at)
	if p.Drill["counter/redis-set-nx"] != r || r.IntervalDays != 4 {
		t.Errorf("rate: %+v", r)
	}
	if p.Seconds() != DefaultSeconds {
		t.Errorf("Seconds() = %d", p.Seconds())
	}
	if !(Resume{}).IsZero() || (Resume{Screen: "home"}).IsZero() {
		t.Error("Resume.IsZero")
	}
}
