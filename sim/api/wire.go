package api

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/learn-idempotency/learn/sim/engine"
)

// BookingJSON is a booking as the API shows it.
type BookingJSON struct {
	ID             string    `json:"id"`
	EventID        int64     `json:"event_id"`
	UserID         string    `json:"user_id"`
	Quantity       int       `json:"quantity"`
	IdempotencyKey string    `json:"idempotency_key"`
	CreatedAt      time.Time `json:"created_at"`
}

// BookResponse is the body of a 200 answer to POST /bookings: the same
// bytes for the request that created the booking and for every replay,
// which the header Idempotent-Replayed: true marks (HeaderReplayed).
type BookResponse struct {
	Booking BookingJSON `json:"booking"`
}

func bookingJSON(b engine.Booking) BookingJSON {
	return BookingJSON{ID: b.PublicID(), EventID: b.EventID, UserID: b.UserID, Quantity: b.Quantity,
		IdempotencyKey: b.Key.String(), CreatedAt: b.CreatedAt.UTC()}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	writeJSONTo(w, v)
}

// writeJSONTo writes v as every answer's body is written: indented, HTML
// characters as they are.
func writeJSONTo(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
