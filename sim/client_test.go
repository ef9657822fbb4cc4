package sim

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

func statuses(o client.Outcome) []string {
	var s []string
	for _, tr := range o.Tries {
		if tr.Error != "" {
			s = append(s, "error")
		} else {
			s = append(s, fmt.Sprint(tr.Status))
		}
	}
	return s
}

func TestClientRetriesNetworkErrorsWithBackoffOnTheFakeClock(t *testing.T) {
	tests := []struct {
		name      string
		plan      func(trace.Attempt) client.Fault
		tries     []string
		sleeps    []time.Duration
		replayed  bool
		rows      int
		errIsLost bool
	}{
		{
			name: "answer lost once",
			plan: func(a trace.Attempt) client.Fault {
				return map[bool]client.Fault{true: client.LoseAnswer, false: client.Deliver}[a.Try == 1]
			},
			tries:    []string{"error", "200"},
			sleeps:   []time.Duration{time.Second},
			replayed: true,
			rows:     1,
		},
		{
			name: "not sent twice",
			plan: func(a trace.Attempt) client.Fault {
				return map[bool]client.Fault{true: client.FailBeforeSend, false: client.Deliver}[a.Try < 3]
			},
			tries:  []string{"error", "error", "200"},
			sleeps: []time.Duration{time.Second, 2 * time.Second},
			rows:   1,
		},
		{
			name:      "every answer lost",
			plan:      func(trace.Attempt) client.Fault { return client.LoseAnswer },
			tries:     []string{"error", "error", "error"},
			sleeps:    []time.Duration{time.Second, 2 * time.Second},
			rows:      1, // the first try committed; the answers never came
			errIsLost: true,
		},
		{
			name:   "delivered",
			plan:   nil,
			tries:  []string{"200"},
			sleeps: nil,
			rows:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(time.Now())
			st, ev := newStage(t, 10, StageConfig{Clock: clk})
			out := st.Browser(api.TokenAda, tt.plan).Book(t.Context(), client.NewIntent(1, ev, 2))
			if got := statuses(out); !slices.Equal(got, tt.tries) {
				t.Errorf("tries = %v, want %v", got, tt.tries)
			}
			if got := clk.Sleeps(); !slices.Equal(got, tt.sleeps) {
				t.Errorf("sleeps = %v, want %v", got, tt.sleeps)
			}
			if tt.errIsLost != errors.Is(out.Err, client.ErrAnswerLost) {
				t.Errorf("Err = %v", out.Err)
			}
			if out.Answer != nil && out.Answer.Replayed != tt.replayed {
				t.Errorf("replayed = %v, want %v", out.Answer.Replayed, tt.replayed)
			}
			if rows, left := counts(t, st, ev); rows != tt.rows || left != 10-2*tt.rows {
				t.Errorf("rows=%d seats_left=%d", rows, left)
			}
		})
	}
}

func TestClientNeverRetries4xx(t *testing.T) {
	clk := clock.NewFake(time.Now())
	st, ev := newStage(t, 10, StageConfig{Clock: clk})
	first := client.NewIntent(1, ev, 2)
	if out := st.Browser(api.TokenAda, nil).Book(t.Context(), first); out.Answer == nil || out.Answer.Status != 200 {
		t.Fatalf("first booking: %+v", out)
	}
	tests := []struct {
		name   string
		token  string
		intent client.Intent
		status int
	}{
		{"409 same key other quantity", api.TokenAda, client.Intent{Number: 2, EventID: ev, Quantity: 3, Key: first.Key}, 409},
		{"409 not enough seats", api.TokenAda, client.NewIntent(3, ev, 9), 409},
		{"404 unknown event", api.TokenAda, client.NewIntent(4, 999, 2), 404},
		{"401 unknown token", "tok-nobody", client.NewIntent(5, ev, 2), 401},
		{"400 quantity", api.TokenAda, client.NewIntent(6, ev, 0), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(clk.Sleeps())
			out := st.Browser(tt.token, nil).Book(t.Context(), tt.intent)
			if got := statuses(out); !slices.Equal(got, []string{fmt.Sprint(tt.status)}) {
				t.Errorf("tries = %v, want one %d", got, tt.status)
			}
			if n := len(clk.Sleeps()) - before; n != 0 {
				t.Errorf("slept %d times after a %d", n, tt.status)
			}
		})
	}
	if rows, left := counts(t, st, ev); rows != 1 || left != 8 {
		t.Errorf("rows=%d seats_left=%d, want 1 and 8", rows, left)
	}
}

// An API instance whose database is gone answers 500: the browser retries
// after 1 s and 2 s, then gives up; nothing was stored, and the same key
// books once when the database is back.
func TestClientRetries5xxThenGivesUpAndTheSameKeyWorksLater(t *testing.T) {
	clk := clock.NewFake(time.Now())
	st, ev := newStage(t, 10, StageConfig{Clock: clk})
	restore, err := st.CutDatabase(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	in := client.NewIntent(1, ev, 2)
	out := st.Browser(api.TokenAda, nil).Book(t.Context(), in)
	if got := statuses(out); !slices.Equal(got, []string{"500", "500", "500"}) {
		t.Fatalf("tries = %v, want three 500s", got)
	}
	if got := clk.Sleeps(); !slices.Equal(got, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("sleeps = %v, want [1s 2s]", got)
	}
	if rows, left := counts(t, st, ev); rows != 0 || left != 10 {
		t.Errorf("rows=%d seats_left=%d, want nothing stored", rows, left)
	}
	restore()
	out = st.Browser(api.TokenAda, nil).Book(t.Context(), in)
	if out.Answer == nil || out.Answer.Status != http.StatusOK || out.Answer.Replayed {
		t.Fatalf("later try = %+v, want a new booking", out.Answer)
	}
	if rows, left := counts(t, st, ev); rows != 1 || left != 8 {
		t.Errorf("rows=%d seats_left=%d, want 1 and 8", rows, left)
	}
}

// The fix the quiz's Break it names for a changed quantity: the browser
// makes it a new intent with a new key (Intent.WithQuantity), which books
// anew; the same change sent with the old key is refused with 409.
func TestChangedQuantityIsANewIntentWithANewKey(t *testing.T) {
	st, ev := newStage(t, 10, StageConfig{})
	browser := st.Browser(api.TokenAda, nil)
	in := client.NewIntent(1, ev, 2)
	first := browser.Book(t.Context(), in)
	if first.Answer == nil || first.Answer.Status != http.StatusOK || first.Answer.Booking == nil || first.Answer.Replayed {
		t.Fatalf("first booking: %+v", first.Answer)
	}

	reused := in
	reused.Quantity = 3 // the client's bug: same key, other quantity
	got := browser.Book(t.Context(), reused)
	if a := got.Answer; a == nil || a.Status != http.StatusConflict || a.Error == nil || a.Error.Code != engine.CodeKeyReused || a.Error.Message != engine.MsgKeyReused {
		t.Fatalf("reused key: %+v, want 409 %q", got.Answer, engine.MsgKeyReused)
	}
	if rows, left := counts(t, st, ev); rows != 1 || left != 8 {
		t.Errorf("after the reused key rows=%d seats_left=%d, want 1 and 8", rows, left)
	}

	changed := in.WithQuantity(3)
	if changed.Key == in.Key || changed.Quantity != 3 || changed.EventID != ev {
		t.Fatalf("WithQuantity(3) = %+v, want event %d, 3 seats and a key other than %s", changed, ev, in.Key)
	}
	second := browser.Book(t.Context(), changed)
	a := second.Answer
	if a == nil || a.Status != http.StatusOK || a.Booking == nil || a.Replayed {
		t.Fatalf("changed quantity: %+v, want 200 with a new booking", a)
	}
	if a.Booking.ID == first.Answer.Booking.ID || a.Booking.Quantity != 3 || a.Booking.IdempotencyKey != changed.Key.String() {
		t.Errorf("changed quantity booked %+v, want a booking other than %s, of 3 seats, with key %s", a.Booking, first.Answer.Booking.ID, changed.Key)
	}
	if rows, left := counts(t, st, ev); rows != 2 || left != 5 {
		t.Errorf("rows=%d seats_left=%d, want 2 rows and 5 seats taken", rows, left)
	}
}

// A step held for a viewer may wait as long as the viewer likes: the
// browser's requests carry no time limit of their own (a client timeout
// would turn a long pause into a retry the scenario does not have); the
// run's context alone ends them.
func TestBrowserRequestsHaveNoWallClockLimit(t *testing.T) {
	st, _ := newStage(t, 10, StageConfig{})
	c := st.Browser(api.TokenAda, nil)
	if c.HTTP.Timeout != 0 {
		t.Errorf("the browser gives up after %s of real time", c.HTTP.Timeout)
	}
	if tr, ok := c.HTTP.Transport.(*client.Network); !ok || tr.Base.(*http.Transport).ResponseHeaderTimeout != 0 {
		t.Errorf("the transport has a time limit: %+v", c.HTTP.Transport)
	}
}
