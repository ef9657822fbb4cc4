package sim

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
)

// BenchmarkLockWaitQueue measures the longest wait of bookings queued
// behind a row lock that is never released while they wait, against the
// bound they are promised (ServeLimits.LockWait): each round sends queued
// bookings (distinct keys) at once over HTTP to an API instance while the
// event's row lock is held from outside, and every one must be answered
// 503 event_busy. It reports the longest wait from sending to the answer,
// and that wait over the bound: 1 and what the answer takes (2.01 with
// lock_timeout as the bound, which started again for the booking that
// waited behind the first).
//
//	go test -run '^$' -bench LockWaitQueue -benchtime=5x ./sim
func BenchmarkLockWaitQueue(b *testing.B) {
	const queued, bound = 8, 500 * time.Millisecond
	ctx := b.Context()
	st, err := NewStage(ctx, testDatabase(), StageConfig{MaxConns: queued, Limits: api.ServeLimits{LockWait: bound, DBWait: time.Minute}})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ev, err := st.AddEvent(ctx, "Bench night", 10, st.Clock.Now().Add(24*time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	s := &apiStage{Stage: st, ids: map[string]int64{"{ev}": ev}}
	url, good := st.Instances[0].URL, s.expand(`{"event_id": {ev}, "quantity": 1}`)
	var longest time.Duration
	for b.Loop() {
		tx, err := st.Admin.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM events WHERE id = $1 FOR UPDATE`, ev); err != nil {
			b.Fatal(err)
		}
		waits := make([]time.Duration, queued)
		answers := make([]answered, queued)
		var wg sync.WaitGroup
		for i := range queued {
			wg.Go(func() {
				t0 := time.Now()
				answers[i] = <-sendAsync(ctx, url, "POST", "/bookings", uuid.NewString(), good)
				waits[i] = time.Since(t0)
			})
		}
		wg.Wait()
		_ = tx.Rollback(context.WithoutCancel(ctx))
		for i, a := range answers {
			e, perr := api.ParseProblem(a.body)
			if a.err != nil || a.status != http.StatusServiceUnavailable || perr != nil || e.Code != api.CodeEventBusy {
				b.Fatalf("booking %d of the queue: %d %v %s, want 503 %s", i+1, a.status, a.err, a.body, api.CodeEventBusy)
			}
			longest = max(longest, waits[i])
		}
	}
	b.ReportMetric(float64(longest.Milliseconds()), "longest-wait-ms")
	b.ReportMetric(float64(longest)/float64(bound), "longest/bound")
}
