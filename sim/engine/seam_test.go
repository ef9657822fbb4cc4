package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/trace"
)

// txFunc is a Transaction written as a function.
type txFunc func(ctx context.Context, tx Tx, req Request) (TxReport, error)

func (f txFunc) Book(ctx context.Context, tx Tx, req Request) (TxReport, error) {
	return f(ctx, tx, req)
}

// The seam keeps the seed's split: the transaction reports what the table
// holds for the key, and the service decides. A transaction that reports
// an existing booking of another quantity gets 409 key_reused, not a
// replay, though it said nothing of a conflict; one that reports its
// insert as created is committed; one that refuses after writing is rolled
// back, its write with it; one that reports nothing it knows of is an
// error, rolled back too.
func TestTheServiceDecidesWhatATransactionReports(t *testing.T) {
	ctx := t.Context()
	key := uuid.New()
	insert := func(ctx context.Context, tx Tx, req Request) (Booking, error) {
		b := Booking{UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity, Key: req.Key, CreatedAt: tx.Now()}
		if _, err := tx.Exec(ctx, `UPDATE events SET seats_left = seats_left - $2 WHERE id = $1`, req.EventID, req.Quantity); err != nil {
			return b, err
		}
		err := tx.QueryRow(ctx, sqlInsertBooks, b.UserID, b.EventID, b.Quantity, b.Key, b.CreatedAt).Scan(&b.ID)
		return b, err
	}
	tests := []struct {
		name       string
		tx         txFunc
		want       func(res Result, err error) bool
		rows, left int
	}{
		{"created is committed", func(ctx context.Context, tx Tx, req Request) (TxReport, error) {
			b, err := insert(ctx, tx, req)
			return TxReport{State: Created, Booking: b}, err
		}, func(res Result, err error) bool { return err == nil && !res.Replayed && res.Booking.ID == 1 }, 1, 8},
		{"existing of another quantity is a conflict", func(ctx context.Context, tx Tx, req Request) (TxReport, error) {
			return TxReport{State: Existing, Booking: Booking{ID: 7, UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity + 1, Key: req.Key}}, nil
		}, func(_ Result, err error) bool {
			r, ok := errors.AsType[*Refusal](err)
			return ok && r.Code == CodeKeyReused && r.Message == MsgKeyReused
		}, 0, 10},
		{"existing of the same request is a replay", func(ctx context.Context, tx Tx, req Request) (TxReport, error) {
			return TxReport{State: Existing, Booking: Booking{ID: 7, UserID: req.UserID, EventID: req.EventID, Quantity: req.Quantity, Key: req.Key}}, nil
		}, func(res Result, err error) bool { return err == nil && res.Replayed && res.Booking.ID == 7 }, 0, 10},
		{"a refusal after a write rolls the write back", func(ctx context.Context, tx Tx, req Request) (TxReport, error) {
			if _, err := insert(ctx, tx, req); err != nil {
				return TxReport{}, err
			}
			return TxReport{}, RefuseStarted()
		}, func(_ Result, err error) bool {
			r, ok := errors.AsType[*Refusal](err)
			return ok && r.Code == CodeEventStarted
		}, 0, 10},
		{"a report of neither is an error", func(ctx context.Context, tx Tx, req Request) (TxReport, error) {
			if _, err := insert(ctx, tx, req); err != nil {
				return TxReport{}, err
			}
			return TxReport{}, nil
		}, func(_ Result, err error) bool {
			_, refused := errors.AsType[*Refusal](err)
			return err != nil && !refused
		}, 0, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, ev := newWorld(t, 10, worldConfig{Own: tt.tx})
			res, err := st.Engine.BookTicket(ctx, Request{UserID: "ada", EventID: ev, Quantity: 2, Key: key})
			if !tt.want(res, err) {
				t.Errorf("BookTicket = %+v, %v", res, err)
			}
			if rows, left := counts(t, st, ev); rows != tt.rows || left != tt.left {
				t.Errorf("rows=%d seats_left=%d, want %d and %d", rows, left, tt.rows, tt.left)
			}
		})
	}
}

// A transaction of one's own is seen on the trace through what it reports
// (the engine knows nothing of its steps): a write, then the COMMIT; the
// booking it found, then a replay's COMMIT. A booking found may be told
// only after the COMMIT that made it, as a plan's lookup is.
func TestATransactionOfOnesOwnIsToldWhatItReported(t *testing.T) {
	tr := trace.New(clock.NewFake(time.Now()), trace.Options{})
	st, ev := newWorld(t, 10, worldConfig{Own: lessonInGo{}, Trace: tr})
	req := Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
	for range 2 {
		if _, err := st.Engine.BookTicket(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	var kinds []trace.Kind
	for _, e := range tr.Recorded() {
		kinds = append(kinds, e.Kind)
	}
	want := []trace.Kind{trace.KindWrite, trace.KindCommit, trace.KindLookup, trace.KindCommit}
	if len(kinds) != len(want) {
		t.Fatalf("the trace is %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("the trace is %v, want %v", kinds, want)
		}
	}
	if e := tr.Recorded()[2]; !e.Found || e.BookingID != "b1" {
		t.Errorf("the lookup step is %+v, want b1 found", e)
	}
}
