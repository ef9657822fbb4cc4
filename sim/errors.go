package sim

import (
	"fmt"
	"net/http"
)

// Error is a booking the engine or the API refused. Status is the HTTP status
// the API answers with, Code a stable machine-readable name, Message the text
// a person reads. Nothing is written when an Error is returned.
type Error struct {
	Status  int    `json:"status"`
	Code    string `json:"code"`
	Message string `json:"message"`

	retryAfter string // a 503's Retry-After when not RetryAfter
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// The codes of Error. The messages of key_reused and not_enough_seats are the
// lesson's ("How it works" step 3 and "Break it").
const (
	CodeKeyReused      = "key_reused"
	CodeNotEnoughSeats = "not_enough_seats"
	CodeEventStarted   = "event_started"
	CodeEventNotFound  = "event_not_found"
	CodeInvalidKey     = "invalid_idempotency_key"
	CodeInvalidQty     = "invalid_quantity"
	CodeInvalidBody    = "invalid_body"
	CodeBodyTooLarge   = "body_too_large"               // 413: the body is over maxBodyBytes
	CodeBodyEncoding   = "unsupported_content_encoding" // 415: a Content-Encoding other than identity
	CodeRequestTimeout = "request_timeout"              // 408: the request did not arrive in time
	CodeInvalidEvent   = "invalid_event_id"
	CodeNotFound       = "not_found"
	CodeBadMethod      = "method_not_allowed"
	CodeUnauthorized   = "unauthorized"
	CodeInternal       = "internal"
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

// eventIDRange says which event ids exist, for a 400 about one that cannot.
const eventIDRange = "event ids are whole numbers from 1; GET /events lists them"

func errKeyReused() *Error {
	return &Error{Status: http.StatusConflict, Code: CodeKeyReused, Message: MsgKeyReused}
}

func errNotEnoughSeats(left, asked int) *Error {
	return &Error{Status: http.StatusConflict, Code: CodeNotEnoughSeats, Message: NotEnoughSeats(left, asked)}
}

func errEventStarted() *Error {
	return &Error{Status: http.StatusConflict, Code: CodeEventStarted, Message: "This event has already started; bookings are closed"}
}

func errEventNotFound(id int64) *Error {
	return &Error{Status: http.StatusNotFound, Code: CodeEventNotFound, Message: fmt.Sprintf("There is no event %d; list the events with GET /events", id)}
}

func errBadRequest(code, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Message: msg}
}

func errUnauthorized() *Error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: "Send the demo user's token as Authorization: Bearer <token>; learn serve prints the tokens"}
}

func errInternal() *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "The booking could not be completed; retry with the same idempotency key"}
}

func errBodyTooLarge() *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge,
		Message: `The body is over 64 KiB; a booking is {"event_id": 1, "quantity": 2}`}
}

// errBodyEncoding is 415 for a body sent with a content coding (RFC 9110
// §8.4.1: a server that does not support a coding answers 415), which the
// API would otherwise read as plain JSON.
func errBodyEncoding(coding string) *Error {
	return &Error{Status: http.StatusUnsupportedMediaType, Code: CodeBodyEncoding,
		Message: fmt.Sprintf("The body must be plain JSON, without Content-Encoding (got %q): send it as it is, like %s", coding, bodyExample)}
}

// errRequestTimeout is 408 for a request whose body did not arrive before
// the listener's read limit: nothing ran, so nothing was stored. learn's
// client never retries a 4xx (ShouldRetry), so the message does not ask it
// to; a person may send the booking again with the same key.
func errRequestTimeout() *Error {
	return &Error{Status: http.StatusRequestTimeout, Code: CodeRequestTimeout,
		Message: "The request did not arrive in time, so nothing was stored. learn's client treats a 4xx as final and does not send it again; you may send the booking again yourself, with the same idempotency key"}
}
