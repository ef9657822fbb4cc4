package check

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/trace"
)

// The example config's wire speaks learn's real API: learn's client,
// through the lossy network that loses the first answer, books as ada and
// retries with the same key; the wire reads the booking (its id, user,
// event and quantity by the config's pointers) and a refusal's problem
// details.
func TestExampleWireSpeaksLearnsAPI(t *testing.T) {
	ctx := t.Context()
	st, err := sim.NewStage(ctx, sim.DatabaseOf(testDB.NewSchema), sim.StageConfig{Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ev, err := st.AddEvent(ctx, "Check night", 10, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte(Example))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWire(cfg)
	tr := trace.New(clock.Real{}, trace.Options{})
	lossy := &client.Network{Wire: w, Trace: tr, Plan: func(at trace.Attempt) client.Fault {
		if at.Intent == 1 && at.Try == 1 {
			return client.LoseAnswer
		}
		return client.Deliver
	}}
	ada := &client.Client{Token: "ada", Wire: w, HTTP: &http.Client{Transport: lossy}, Clock: clock.NewFake(time.Now()), Trace: tr,
		Picker: &api.RoundRobin{Instances: st.Instances}}

	in := client.NewIntent(1, ev, 2)
	out := ada.Book(context.Background(), in)
	b := out.Answer.Booking
	if len(out.Tries) != 2 || out.Tries[0].Error == "" || b == nil || b.UserID != "ada" || b.EventID != ev || b.Quantity != 2 || b.ID == "" {
		t.Fatalf("the lost answer, then the retry with the same key: %+v, booking %+v", out.Tries, b)
	}
	var rows int
	if err := st.Admin.QueryRow(ctx, `SELECT count(*) FROM bookings`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("%d bookings stored (%v), want 1", rows, err)
	}

	changed := in
	changed.Number, changed.Quantity = 2, 3
	ref := ada.Book(context.Background(), changed).Answer
	if ref == nil || ref.Status != 409 || ref.Error == nil || ref.Error.Code != "key_reused" || ref.Error.Message == "" || !w.Refused(ref.Status) || ref.Booking != nil {
		t.Errorf("the same key with quantity 3: %+v", ref)
	}
}
