package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/sim/clock"
)

// The readers give every column as the API and the UI show it: times in
// UTC, RFC 3339 with the microseconds PostgreSQL keeps, public booking ids,
// keys as text; bookings of one user only; nothing at all as nil.
func TestReadersShowEveryColumn(t *testing.T) {
	clk := clock.NewFake(time.Date(2030, 5, 1, 18, 0, 0, 123456000, time.FixedZone("CEST", 2*60*60)))
	st := openWorld(t, worldConfig{Clock: clk})
	pool := st.Engine.Pool()

	empty, err := ReadRows(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Events != nil || empty.Bookings != nil {
		t.Errorf("empty tables read as %#v, want nil slices", empty)
	}
	if _, found, err := ReadEvent(t.Context(), pool, 1); err != nil || found {
		t.Errorf("ReadEvent of no event: found=%v err=%v", found, err)
	}

	ev, err := st.AddEvent(t.Context(), "Test night", 10, clk.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	key := uuid.MustParse("7d9f2c4e-1b3a-4c5d-9e8f-0a1b2c3d4e5f")
	res, err := st.Engine.BookTicket(t.Context(), Request{UserID: "ada", EventID: ev, Quantity: 2, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	wantEvent := EventRow{ID: ev, Name: "Test night", SeatsLeft: 8, StartsAt: "2030-05-02T16:00:00.123456Z"}
	wantBooking := BookingRow{ID: res.Booking.PublicID(), UserID: "ada", EventID: ev, Quantity: 2,
		Key: "7d9f2c4e-1b3a-4c5d-9e8f-0a1b2c3d4e5f", CreatedAt: "2030-05-01T16:00:00.123456Z"}

	got, err := ReadRows(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Rows{Events: []EventRow{wantEvent}, Bookings: []BookingRow{wantBooking}}); !reflect.DeepEqual(got, want) {
		t.Errorf("ReadRows =\n %+v\nwant\n %+v", got, want)
	}
	if e, found, err := ReadEvent(t.Context(), pool, ev); err != nil || !found || e != wantEvent {
		t.Errorf("ReadEvent = %+v, %v, %v; want %+v", e, found, err, wantEvent)
	}
	if b, err := ReadBookings(t.Context(), pool, "ada"); err != nil || !reflect.DeepEqual(b, []BookingRow{wantBooking}) {
		t.Errorf("ReadBookings(ada) = %+v, %v; want %+v", b, err, wantBooking)
	}
	if b, err := ReadBookings(t.Context(), pool, "ben"); err != nil || b != nil {
		t.Errorf("ReadBookings(ben) = %#v, %v; want nil", b, err)
	}
}
