package api

import (
	"fmt"
	"net/http"

	"github.com/learn-idempotency/learn/sim/engine"
)

// Error is the body of every answer of the API that is not 200: a request
// the API or the engine refused (nothing is written then), or one it could
// not serve. Status is the HTTP status the API answers with, Code a stable
// machine-readable name, Message the text a person reads.
type Error struct {
	Status  int    `json:"status"`
	Code    string `json:"code"`
	Message string `json:"message"`

	retryAfter string // a 503's Retry-After when not RetryAfter
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// The codes of the API's own refusals; the engine's are in refusal.go
// (key_reused, not_enough_seats, event_started, event_not_found,
// invalid_idempotency_key, invalid_quantity, unauthorized).
const (
	CodeInvalidBody    = "invalid_body"
	CodeBodyTooLarge   = "body_too_large"               // 413: the body is over maxBodyBytes
	CodeBodyEncoding   = "unsupported_content_encoding" // 415: a Content-Encoding other than identity
	CodeRequestTimeout = "request_timeout"              // 408: the request did not arrive in time
	CodeInvalidEvent   = "invalid_event_id"
	CodeNotFound       = "not_found"
	CodeBadMethod      = "method_not_allowed"
	CodeInternal       = "internal"
)

// eventIDRange says which event ids exist, for a 400 about one that cannot.
const eventIDRange = "event ids are whole numbers from 1; GET /events lists them"

// errorOf is the answer to a refusal of the engine: its status, code and
// message as they are.
func errorOf(r *engine.Refusal) *Error {
	return &Error{Status: r.Status, Code: r.Code, Message: r.Message}
}

func errBadRequest(code, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Message: msg}
}

func errUnauthorized() *Error { return errorOf(engine.RefuseUnauthorized()) }

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
