package sim

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/api"
)

// outageDB is testDB's schemas, with an outage the test sets.
type outageDB struct {
	outage atomic.Pointer[api.Outage]
}

func (d *outageDB) NewSchema(ctx context.Context) (Schema, error) {
	return testDatabase().NewSchema(ctx)
}
func (d *outageDB) Outage() *api.Outage { return d.outage.Load() }

// While the PostgreSQL under a stage is known to be down (its Database
// reports an Outage), a request that meets a database error is answered
// 503 database_down with what happened: that learn is starting it again
// (retry in a few seconds, Retry-After 2), or that it is gone; never "in a
// moment". Once the outage is over, the same key books.
func TestDatabaseOutageIsAnsweredAsSuch(t *testing.T) {
	db := &outageDB{}
	st, err := NewStage(t.Context(), db, StageConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ev, err := st.AddEvent(t.Context(), "Test night", 10, st.Clock.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	s := &apiStage{Stage: st, ids: map[string]int64{"{ev}": ev}}
	url, good, key := st.Instances[0].URL, s.expand(`{"event_id": {ev}, "quantity": 2}`), uuid.NewString()
	restore, err := st.CutDatabase(t.Context(), 1) // every statement fails, as with a server that is gone
	if err != nil {
		t.Fatal(err)
	}
	const what = "learn's PostgreSQL (pid 4197) was killed by signal 9 (killed)"
	for _, tt := range []struct {
		outage     api.Outage
		retryAfter string
		says       string
	}{
		{api.Outage{What: what, Back: true}, "2", "starting it again on the same data"},
		{api.Outage{What: what}, api.RetryAfter, "Nothing can be booked here until learn is started again"},
	} {
		db.outage.Store(&tt.outage)
		for _, r := range []struct{ method, path, key, body string }{{"POST", "/bookings", key, good}, {"GET", "/events", "", ""}} {
			a := <-sendAsync(t.Context(), url, r.method, r.path, r.key, r.body)
			if a.err != nil || a.status != 503 || a.header.Get("Retry-After") != tt.retryAfter {
				t.Fatalf("%s %s while the database is down (back: %v): %d %v (Retry-After %q) %s", r.method, r.path, tt.outage.Back, a.status, a.err, a.header.Get("Retry-After"), a.body)
			}
			e := decodeAPIError(t, a.body)
			if e.Code != api.CodeDatabaseDown || !strings.Contains(e.Message, what) || !strings.Contains(e.Message, tt.says) || strings.Contains(e.Message, "in a moment") {
				t.Errorf("%s %s: %+v, want %s saying %q and %q", r.method, r.path, e, api.CodeDatabaseDown, what, tt.says)
			}
		}
	}
	db.outage.Store(nil)
	restore()
	must200(t, "the same key once the database is back", <-sendAsync(t.Context(), url, "POST", "/bookings", key, good), false)
}
