package engine

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/trace"
)

func TestBookTicketFirstBookingTakesSeats(t *testing.T) {
	bothWays(t, func(t *testing.T, cfg worldConfig) {
		st, ev := newWorld(t, 10, cfg)
		key := uuid.New()
		res, err := st.Engine.BookTicket(t.Context(), Request{UserID: "ada", EventID: ev, Quantity: 2, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		if res.Replayed {
			t.Error("first booking reported as a replay")
		}
		if res.Booking.ID == 0 || res.Booking.Quantity != 2 || res.Booking.EventID != ev || res.Booking.Key != key || res.Booking.UserID != "ada" {
			t.Errorf("booking = %+v", res.Booking)
		}
		if rows, left := counts(t, st, ev); rows != 1 || left != 8 {
			t.Errorf("rows=%d seats_left=%d, want 1 and 8", rows, left)
		}
	})
}

func TestBookTicketReplayReturnsFirstBookingAndWritesNothing(t *testing.T) {
	bothWays(t, func(t *testing.T, cfg worldConfig) {
		st, ev := newWorld(t, 10, cfg)
		req := Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
		first, err := st.Engine.BookTicket(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			again, err := st.Engine.BookTicket(t.Context(), req)
			if err != nil {
				t.Fatalf("repeat %d: %v", i, err)
			}
			if !again.Replayed || again.Booking.ID != first.Booking.ID || !again.Booking.CreatedAt.Equal(first.Booking.CreatedAt) {
				t.Errorf("repeat %d = %+v, want a replay of %+v", i, again, first)
			}
		}
		if rows, left := counts(t, st, ev); rows != 1 || left != 8 {
			t.Errorf("rows=%d seats_left=%d, want 1 and 8", rows, left)
		}
	})
}

func TestBookTicketSameKeyOtherBookingIs409(t *testing.T) {
	bothWays(t, func(t *testing.T, cfg worldConfig) {
		tests := []struct {
			name   string
			change func(r *Request, other int64)
		}{
			{"other quantity", func(r *Request, _ int64) { r.Quantity = 3 }},
			{"other event", func(r *Request, other int64) { r.EventID = other }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				st, ev := newWorld(t, 10, cfg)
				other, err := st.AddEvent(t.Context(), "Other night", 10, st.Clock.Now().Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				req := Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
				if _, err := st.Engine.BookTicket(t.Context(), req); err != nil {
					t.Fatal(err)
				}
				tt.change(&req, other)
				_, err = st.Engine.BookTicket(t.Context(), req)
				var e *Refusal
				if !errors.As(err, &e) || e.Status != http.StatusConflict || e.Code != CodeKeyReused || e.Message != MsgKeyReused {
					t.Fatalf("err = %v, want 409 %q", err, MsgKeyReused)
				}
				if rows, left := counts(t, st, ev); rows != 1 || left != 8 {
					t.Errorf("rows=%d seats_left=%d, want 1 and 8", rows, left)
				}
				if _, left := counts(t, st, other); left != 10 {
					t.Errorf("other event seats_left=%d, want 10", left)
				}
			})
		}
	})
}

// At every isolation level: at REPEATABLE READ and SERIALIZABLE the copies
// that waited for the row lock fail with 40001, and the engine runs their
// transaction again (Design.On40001), so each still gets the booking.
func TestBookTicketConcurrentCopiesMakeOneBooking(t *testing.T) {
	for _, level := range []IsolationLevel{ReadCommitted, RepeatableRead, Serializable} {
		t.Run(level.SQL(), func(t *testing.T) { concurrentCopiesMakeOneBooking(t, level) })
	}
}

func concurrentCopiesMakeOneBooking(t *testing.T, level IsolationLevel) {
	bothWays(t, func(t *testing.T, cfg worldConfig) {
		const copies = 10
		st, ev := newWorld(t, 10, cfg.with(worldConfig{MaxConns: copies}))
		st.Engine.Design.Isolation = level
		req := Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
		results := make([]Result, copies)
		errs := make([]error, copies)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range copies {
			wg.Go(func() {
				<-start
				results[i], errs[i] = st.Engine.BookTicket(t.Context(), req)
			})
		}
		close(start)
		wg.Wait()
		ids := map[int64]bool{}
		created := 0
		for i := range copies {
			if errs[i] != nil {
				t.Fatalf("copy %d: %v", i, errs[i])
			}
			ids[results[i].Booking.ID] = true
			if !results[i].Replayed {
				created++
			}
		}
		if len(ids) != 1 || created != 1 {
			t.Errorf("distinct ids=%d, created=%d; want 1 and 1", len(ids), created)
		}
		if rows, left := counts(t, st, ev); rows != 1 || left != 8 {
			t.Errorf("rows=%d seats_left=%d, want 1 and 8", rows, left)
		}
	})
}

// holdKeyLock takes, in a transaction of the admin's that the test's end
// rolls back, the lock on req's key that OpClaimKey tries.
func holdKeyLock(t *testing.T, st *world, req Request) pgx.Tx {
	t.Helper()
	tx, err := st.Admin.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(t.Context())) })
	if _, err := tx.Exec(t.Context(), `SELECT pg_advisory_xact_lock(hashtextextended($1::text || ' ' || $2::uuid::text, 0))`, req.UserID, req.Key); err != nil {
		t.Fatal(err)
	}
	return tx
}

// Under Design.InFlight Answer409 a request whose key another transaction
// holds is answered at once, 409 request_in_progress, writing nothing; the
// same key of another user is another lock; once the holder ends, the key
// books; once it is booked, a retry replays even while another holds the
// lock. The transaction that holds the key here is the admin's, taking
// the very lock the engine's first statement tries.
func TestBookTicketAnswers409ForAKeyInFlight(t *testing.T) {
	for name, cfg := range map[string]worldConfig{
		"unwatched": {},
		"traced":    {Trace: trace.New(clock.NewFake(time.Now()), trace.Options{})},
	} {
		t.Run(name, func(t *testing.T) {
			st, ev := newWorld(t, 10, cfg.with(worldConfig{Design: Design{InFlight: Answer409}}))
			req := Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
			tx := holdKeyLock(t, st, req)
			_, err := st.Engine.BookTicket(t.Context(), req)
			if r, ok := errors.AsType[*Refusal](err); !ok || r.Status != http.StatusConflict || r.Code != CodeInProgress {
				t.Fatalf("with the key held: err = %v, want 409 %s", err, CodeInProgress)
			}
			if rows, left := counts(t, st, ev); rows != 0 || left != 10 {
				t.Errorf("after the 409: rows=%d seats_left=%d, want 0 and 10", rows, left)
			}
			ben := req
			ben.UserID = "ben"
			if res, err := st.Engine.BookTicket(t.Context(), ben); err != nil || res.Replayed {
				t.Fatalf("ben with ada's key while ada's is held = %+v, %v; want a new booking", res, err)
			}
			if err := tx.Commit(t.Context()); err != nil {
				t.Fatal(err)
			}
			first, err := st.Engine.BookTicket(t.Context(), req)
			if err != nil || first.Replayed {
				t.Fatalf("once the key is free = %+v, %v; want a new booking", first, err)
			}
			// A key whose booking is committed needs no lock: a retry while
			// another holds it (a replay in its transaction) replays too.
			holdKeyLock(t, st, req)
			again, err := st.Engine.BookTicket(t.Context(), req)
			if err != nil || !again.Replayed || again.Booking.ID != first.Booking.ID {
				t.Fatalf("the retry while the key's lock is held = %+v, %v; want a replay of %d", again, err, first.Booking.ID)
			}
			if rows, left := counts(t, st, ev); rows != 2 || left != 6 {
				t.Errorf("rows=%d seats_left=%d, want 2 and 6", rows, left)
			}
		})
	}
}

// The key sweeper removes the keys of the bookings made before its cutoff,
// and only those: the bookings stay (their key NULL, read as ""), a
// booking read by id still reads, and a request with a swept key is a new
// request: it books again.
func TestSweepKeysExpiresOnlyOlderKeys(t *testing.T) {
	clk := clock.NewFake(time.Date(2030, 5, 1, 18, 0, 0, 0, time.UTC))
	st := openWorld(t, worldConfig{Clock: clk})
	ev, err := st.AddEvent(t.Context(), "Next month", 10, clk.Now().Add(30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := AllowKeyExpiry(t.Context(), st.Admin); err != nil {
		t.Fatal(err)
	}
	old := Request{UserID: "ada", EventID: ev, Quantity: 1, Key: uuid.New()}
	first, err := st.Engine.BookTicket(t.Context(), old)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(23 * time.Hour)
	young := Request{UserID: "ben", EventID: ev, Quantity: 1, Key: uuid.New()}
	if _, err := st.Engine.BookTicket(t.Context(), young); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Hour) // the first is 25 hours old, the second 2
	swept, err := SweepKeys(t.Context(), st.Admin, clk.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if want := []SweptKey{{BookingID: first.Booking.PublicID(), UserID: "ada", Key: old.Key.String()}}; !slices.Equal(swept, want) {
		t.Fatalf("swept %+v, want %+v", swept, want)
	}
	rows, err := ReadRows(t.Context(), st.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Bookings) != 2 || rows.Bookings[0].Key != "" || rows.Bookings[1].Key != young.Key.String() {
		t.Fatalf("rows after the sweep: %+v", rows.Bookings)
	}
	if b, err := st.Engine.BookingByID(t.Context(), first.Booking.ID); err != nil || b.Key != uuid.Nil || b.Quantity != 1 {
		t.Fatalf("the swept booking by id = %+v, %v", b, err)
	}
	again, err := st.Engine.BookTicket(t.Context(), old)
	if err != nil || again.Replayed || again.Booking.ID == first.Booking.ID {
		t.Fatalf("the swept key sent again = %+v, %v; want a new booking", again, err)
	}
	if res, err := st.Engine.BookTicket(t.Context(), young); err != nil || !res.Replayed {
		t.Fatalf("the young key sent again = %+v, %v; want a replay", res, err)
	}
	if swept, err := SweepKeys(t.Context(), st.Admin, clk.Now().Add(-24*time.Hour)); err != nil || len(swept) != 0 {
		t.Fatalf("a second sweep = %+v, %v; want nothing", swept, err)
	}
}

func TestBookTicketFailedBookingStoresNothingAndKeyWorksLater(t *testing.T) {
	bothWays(t, func(t *testing.T, cfg worldConfig) {
		st, ev := newWorld(t, 1, cfg)
		req := Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
		_, err := st.Engine.BookTicket(t.Context(), req)
		var e *Refusal
		if !errors.As(err, &e) || e.Status != http.StatusConflict || e.Message != NotEnoughSeats(1, 2) {
			t.Fatalf("err = %v, want 409 %q", err, NotEnoughSeats(1, 2))
		}
		if rows, left := counts(t, st, ev); rows != 0 || left != 1 {
			t.Errorf("after refusal rows=%d seats_left=%d, want 0 and 1", rows, left)
		}
		// Seats come back (a cancellation elsewhere): the same key now books.
		if _, err := st.Admin.Exec(t.Context(), `UPDATE events SET seats_left = 5 WHERE id = $1`, ev); err != nil {
			t.Fatal(err)
		}
		res, err := st.Engine.BookTicket(t.Context(), req)
		if err != nil || res.Replayed {
			t.Fatalf("retry later = %+v, %v; want a new booking", res, err)
		}
		if rows, left := counts(t, st, ev); rows != 1 || left != 3 {
			t.Errorf("rows=%d seats_left=%d, want 1 and 3", rows, left)
		}
	})
}

func TestBookTicketReplayAfterSellOutAndStart(t *testing.T) {
	bothWays(t, func(t *testing.T, cfg worldConfig) {
		clk := clock.NewFake(time.Date(2030, 5, 1, 18, 0, 0, 0, time.UTC))
		st, ev := newWorld(t, 2, cfg.with(worldConfig{Clock: clk}))
		req := Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
		first, err := st.Engine.BookTicket(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, left := counts(t, st, ev); left != 0 {
			t.Fatalf("seats_left=%d, want sold out", left)
		}
		again, err := st.Engine.BookTicket(t.Context(), req)
		if err != nil || !again.Replayed || again.Booking.ID != first.Booking.ID {
			t.Fatalf("replay after sell-out = %+v, %v", again, err)
		}
		clk.Advance(48 * time.Hour) // the event has started
		again, err = st.Engine.BookTicket(t.Context(), req)
		if err != nil || !again.Replayed || again.Booking.ID != first.Booking.ID {
			t.Fatalf("replay after start = %+v, %v", again, err)
		}
	})
}

func TestBookTicketRefusals(t *testing.T) {
	bothWays(t, func(t *testing.T, cfg worldConfig) {
		clk := clock.NewFake(time.Date(2030, 5, 1, 18, 0, 0, 0, time.UTC))
		st, ev := newWorld(t, 10, cfg.with(worldConfig{Clock: clk}))
		started, err := st.AddEvent(t.Context(), "Yesterday", 10, clk.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			req    Request
			status int
			code   string
		}{
			{"unknown event", Request{UserID: "ada", EventID: 999, Quantity: 2, Key: uuid.New()}, 404, CodeEventNotFound},
			{"nil key", Request{UserID: "ada", EventID: ev, Quantity: 2}, 400, CodeInvalidKey},
			{"zero quantity", Request{UserID: "ada", EventID: ev, Quantity: 0, Key: uuid.New()}, 400, CodeInvalidQty},
			{"quantity above max", Request{UserID: "ada", EventID: ev, Quantity: MaxQuantity + 1, Key: uuid.New()}, 400, CodeInvalidQty},
			{"no user", Request{EventID: ev, Quantity: 2, Key: uuid.New()}, 401, CodeUnauthorized},
			{"all the seats left, at the most one may book", Request{UserID: "ada", EventID: ev, Quantity: MaxQuantity, Key: uuid.New()}, 0, ""}, // 10 of 10 fits; the refusal of one more follows the table
			{"event started", Request{UserID: "ada", EventID: started, Quantity: 2, Key: uuid.New()}, 409, CodeEventStarted},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := st.Engine.BookTicket(t.Context(), tt.req)
				if tt.status == 0 {
					if err != nil {
						t.Fatalf("err = %v, want success", err)
					}
					return
				}
				var e *Refusal
				if !errors.As(err, &e) || e.Status != tt.status || e.Code != tt.code || e.Message == "" {
					t.Fatalf("err = %v, want %d %s", err, tt.status, tt.code)
				}
			})
		}
		// The full event: one more seat is refused with the lesson's message.
		_, err = st.Engine.BookTicket(t.Context(), Request{UserID: "ada", EventID: ev, Quantity: 1, Key: uuid.New()})
		var e *Refusal
		if !errors.As(err, &e) || e.Code != CodeNotEnoughSeats {
			t.Fatalf("err = %v, want not enough seats", err)
		}
		if rows, _ := counts(t, st, ev); rows != 1 {
			t.Errorf("rows=%d, want only the 10-seat booking", rows)
		}
	})
}

// Same user and key on two events at once: both pass the lookup (forced by a
// barrier at PointAfterLookup), both take seats and insert; the constraint
// rejects one INSERT with 23505, its whole transaction rolls back (its event
// keeps its seats), and it answers 409 after reading the winner.
func TestBookTicketUniqueViolationRollsBackTheLoserSeatsIncluded(t *testing.T) {
	tr := trace.New(clock.NewFake(time.Now()), trace.Options{})
	st, evA := newWorld(t, 10, worldConfig{Trace: tr})
	evB, err := st.AddEvent(t.Context(), "Other night", 10, st.Clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	eng := st.Engine
	eng.Barrier, eng.BarrierAt = NewBarrier(2), PointAfterLookup
	key := uuid.New()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, ev := range []int64{evA, evB} {
		wg.Go(func() {
			_, errs[i] = eng.BookTicket(t.Context(), Request{UserID: "ada", EventID: ev, Quantity: 2, Key: key})
		})
	}
	wg.Wait()
	var ok, conflict int
	for _, err := range errs {
		var e *Refusal
		switch {
		case err == nil:
			ok++
		case errors.As(err, &e) && e.Code == CodeKeyReused:
			conflict++
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 || conflict != 1 {
		t.Fatalf("ok=%d conflict=%d, want 1 and 1", ok, conflict)
	}
	_, leftA := counts(t, st, evA)
	rows, leftB := counts(t, st, evB)
	if rows != 1 || leftA+leftB != 18 {
		t.Errorf("rows=%d seats_left A=%d B=%d; want 1 row and 2 seats taken in all", rows, leftA, leftB)
	}
	var saw23505 bool
	for _, ev := range tr.Recorded() {
		if ev.Kind == trace.KindRollback && strings.Contains(ev.Text, "23505") {
			saw23505 = true
		}
	}
	if !saw23505 {
		t.Error("no rollback for a unique violation in the trace: the race was not forced")
	}
}

// Requests that end before the pause point leave the barrier, so the one
// held there goes on rather than waiting for copies that will never come:
// a request refused before it (404), one never started (400) and a
// replay found at the lookup. (The replay is of another event: the held
// request keeps its event's row locked until it commits.)
func TestBookTicketRequestsThatEndBeforeThePauseLeaveTheBarrier(t *testing.T) {
	st, ev := newWorld(t, 10, worldConfig{MaxConns: 6})
	other, err := st.AddEvent(t.Context(), "Other night", 10, st.Clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	eng := st.Engine
	replay := Request{UserID: "ada", EventID: other, Quantity: 2, Key: uuid.New()}
	first, err := eng.BookTicket(t.Context(), replay)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBarrier(4)
	eng.Barrier, eng.BarrierAt = b, PointAfterLookup
	reqs := []Request{
		{UserID: "ada", EventID: ev, Quantity: 3, Key: uuid.New()},  // held at the pause point, then books
		{UserID: "ada", EventID: 999, Quantity: 2, Key: uuid.New()}, // 404 before the pause point
		{UserID: "ada", EventID: ev, Quantity: 0, Key: uuid.New()},  // 400: no transaction at all
		replay, // found at the lookup
	}
	results := make([]Result, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Go(func() { results[i], errs[i] = eng.BookTicket(t.Context(), req) })
	}
	wg.Wait()
	if errs[0] != nil || results[0].Replayed || results[0].Booking.Quantity != 3 {
		t.Errorf("held request = %+v, %v; want a new booking of 3", results[0], errs[0])
	}
	for i, status := range map[int]int{1: http.StatusNotFound, 2: http.StatusBadRequest} {
		if e, ok := errors.AsType[*Refusal](errs[i]); !ok || e.Status != status {
			t.Errorf("request %d: err = %v, want %d", i, errs[i], status)
		}
	}
	if errs[3] != nil || !results[3].Replayed || results[3].Booking.ID != first.Booking.ID {
		t.Errorf("replay = %+v, %v; want a replay of %d", results[3], errs[3], first.Booking.ID)
	}
	if !b.IsOpen() {
		t.Error("the barrier is still closed")
	}
	if rows, left := counts(t, st, ev); rows != 2 || left != 7 {
		t.Errorf("rows=%d seats_left=%d, want 2 (3 seats here, 2 on the other event) and 7", rows, left)
	}
}

// An engine nobody watches sends its statements in two pipelines; a unique
// violation on the INSERT of the second must still roll back the whole
// transaction, seats included, and answer with the winner. The winner here
// is a booking of the same user and key on another event, inserted by
// another transaction that commits only once the engine's INSERT waits
// for it: the lookup could not see it, the constraint settles it.
func TestBookTicketUnwatchedUniqueViolationRollsBackSeatsIncluded(t *testing.T) {
	st, evA := newWorld(t, 10, worldConfig{})
	evB, err := st.AddEvent(t.Context(), "Other night", 10, st.Clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	eng := st.Engine
	if _, ok := eng.Pipelined(); !ok {
		t.Fatal("the engine of a stage without a trace does not pipeline: this test proves nothing")
	}
	ctx := t.Context()
	key := uuid.New()
	other, err := st.Admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback(context.WithoutCancel(ctx))
	if _, err := other.Exec(ctx, sqlInsertBooks, "ada", evB, 3, key, st.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := eng.BookTicket(ctx, Request{UserID: "ada", EventID: evA, Quantity: 2, Key: key})
		done <- err
	}()
	// Wait until the engine's INSERT waits for the other transaction.
	for {
		var waiting bool
		err := st.Admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO bookings%')`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the booking ended before the other transaction committed: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := other.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err = <-done
	var e *Refusal
	if !errors.As(err, &e) || e.Code != CodeKeyReused {
		t.Fatalf("err = %v, want 409 %q (the winner is of another event)", err, MsgKeyReused)
	}
	rows, leftA := counts(t, st, evA)
	if rows != 1 || leftA != 10 {
		t.Errorf("rows=%d seats_left A=%d; want the winner's 1 row and all 10 seats of A back", rows, leftA)
	}
}
