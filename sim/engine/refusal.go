package engine

import (
	"fmt"
	"net/http"
)

// Refusal is a booking the engine refused: nothing was written, so the
// same idempotency key may try again later. Status is the HTTP status the
// lesson answers it with ("How it works": 404 for no such event, 409 for a
// key used for another booking, too few seats or an event that started;
// 400 and 401 for a request that can never succeed), Code a stable
// machine-readable name (the API's error code), Message the text a person
// reads.
type Refusal struct {
	Status  int
	Code    string
	Message string

	why string // the trace's words for the ROLLBACK; "": the message
}

func (r *Refusal) Error() string { return fmt.Sprintf("%d %s: %s", r.Status, r.Code, r.Message) }

// because sets the trace's words for the ROLLBACK of r and returns r.
func (r *Refusal) because(why string) *Refusal {
	r.why = why
	return r
}

// The codes of the engine's refusals. The messages of key_reused and
// not_enough_seats are the lesson's ("How it works" step 3 and "Break it").
const (
	CodeKeyReused      = "key_reused"
	CodeNotEnoughSeats = "not_enough_seats"
	CodeEventStarted   = "event_started"
	CodeEventNotFound  = "event_not_found"
	CodeInvalidKey     = "invalid_idempotency_key"
	CodeInvalidQty     = "invalid_quantity"
	CodeUnauthorized   = "unauthorized"
	// CodeInProgress is the 409 of a key whose first request is still
	// being processed (Design.InFlight Answer409): unlike every other
	// 4xx it is not final, and a client retries it after Retry-After.
	CodeInProgress = "request_in_progress"
)

// MsgKeyReused is the 409 answer to a key sent again with another event or
// quantity.
const MsgKeyReused = "This idempotency key was already used for a different booking"

// MsgNotEnoughSeats begins the 409 answer when the event has fewer seats
// left than asked for; NotEnoughSeats is the whole message.
const MsgNotEnoughSeats = "Not enough seats left"

// NotEnoughSeats is the message of the 409 for asked seats when left are
// left: "Not enough seats left: 1 left, you asked for 2".
func NotEnoughSeats(left, asked int) string {
	return fmt.Sprintf("%s: %d left, you asked for %d", MsgNotEnoughSeats, left, asked)
}

// ExampleKey is the idempotency key the messages about a key show.
const ExampleKey = "7d9f2c4e-1b3a-4c5d-9e8f-0a1b2c3d4e5f"

// RefuseKeyReused is the 409 for a key whose booking is not this request
// (another event, quantity or user): the service's decision (Engine.Compare).
func RefuseKeyReused() *Refusal {
	return &Refusal{Status: http.StatusConflict, Code: CodeKeyReused, Message: MsgKeyReused}
}

// RefuseNotEnoughSeats is the 409 for asked seats when left are left.
func RefuseNotEnoughSeats(left, asked int) *Refusal {
	return &Refusal{Status: http.StatusConflict, Code: CodeNotEnoughSeats, Message: NotEnoughSeats(left, asked)}
}

// RefuseStarted is the 409 for an event that has started.
func RefuseStarted() *Refusal {
	return &Refusal{Status: http.StatusConflict, Code: CodeEventStarted, Message: "This event has already started; bookings are closed"}
}

// RefuseInProgress is the 409 for a key that another request, still in
// its transaction, holds (Design.InFlight Answer409).
func RefuseInProgress() *Refusal {
	return &Refusal{Status: http.StatusConflict, Code: CodeInProgress, Message: "A request with this idempotency key is still being processed; retry after Retry-After with the same key, and its booking comes back"}
}

// RefuseNoEvent is the 404 for an event id that no event has.
func RefuseNoEvent(id int64) *Refusal {
	return &Refusal{Status: http.StatusNotFound, Code: CodeEventNotFound, Message: fmt.Sprintf("There is no event %d; list the events with GET /events", id)}
}

// RefuseUnauthorized is the 401 for a request without a user.
func RefuseUnauthorized() *Refusal {
	return &Refusal{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: "Send the demo user's token as Authorization: Bearer <token>; learn serve prints the tokens"}
}

// refuseBadRequest is a 400 with code and msg.
func refuseBadRequest(code, msg string) *Refusal {
	return &Refusal{Status: http.StatusBadRequest, Code: code, Message: msg}
}
