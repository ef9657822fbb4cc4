package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/learn-idempotency/learn/sim/engine"
)

// ProblemBase is where each problem type is documented: a problem's type
// is ProblemBase + its code (docs/problems.md, one heading per code, made
// from Problems by TestProblemsPageListsEveryCode).
const ProblemBase = "https://github.com/learn-idempotency/learn/blob/main/docs/problems.md#"

// ContentTypeProblem is the media type of every answer that is not 200
// (RFC 9457).
const ContentTypeProblem = "application/problem+json"

// A ProblemType is one kind of answer that is not 200: its code (stable,
// the problem's "code" member and the end of its "type"), HTTP status,
// title (the same for every occurrence, RFC 9457 §3.1.3), whether anything
// was stored, and what a client should do.
type ProblemType struct {
	Code   string
	Status int
	Title  string
	// Stored says what a booking answered so has left behind: "nothing"
	// for a refusal (the same key may be sent again later and succeed),
	// "unknown" when the request may have been carried out (retry with
	// the same key: a stored booking comes back as a replay).
	Stored string
	// Advice is what a client should do, in a sentence.
	Advice string
	// Retry marks the types whose advice is to retry with the same key:
	// their answers carry Retry-After.
	Retry bool
}

// The problem types, in the order of their statuses. Every Error the API
// answers has one of these codes (TestEveryErrorHasAProblemType).
var problemTypes = []ProblemType{
	{engine.CodeInvalidKey, 400, "Invalid idempotency key", "nothing", "Send one Idempotency-Key header holding a UUID (bare or as a structured-field string); make one per booking intent and reuse it on every retry", false},
	{engine.CodeInvalidQty, 400, "Invalid quantity", "nothing", "Send a quantity, a whole number from 1 to 10", false},
	{CodeInvalidBody, 400, "Invalid body", "nothing", `Send a JSON object {"event_id": 1, "quantity": 2} and nothing else`, false},
	{CodeInvalidEvent, 400, "Invalid event id", "nothing", "Send an event_id that is a whole number from 1; GET /events lists them", false},
	{CodeBadRequest, 400, "Unreadable request", "nothing", "Send well-formed HTTP/1.1", false},
	{engine.CodeUnauthorized, 401, "Unauthorized", "nothing", "Send a user's token as Authorization: Bearer <token>; learn serve prints the tokens", false},
	{engine.CodeEventNotFound, 404, "No such event", "nothing", "Book an event that exists; GET /events lists them", false},
	{CodeNotFound, 404, "Not found", "nothing", "Use one of the paths of the OpenAPI document, GET /openapi.json", false},
	{CodeBadMethod, 405, "Method not allowed", "nothing", "Use a method the Allow header names", false},
	{CodeRequestTimeout, 408, "Request timeout", "nothing", "Send the whole request sooner; you may send the booking again with the same idempotency key", false},
	{engine.CodeKeyReused, 409, "Idempotency key reused", "nothing", "The key belongs to an earlier booking with another event or quantity: a new intent needs a new key", false},
	{engine.CodeInProgress, 409, "Request in progress", "nothing", "Retry after Retry-After with the same idempotency key: the first request with it is still being processed, and its booking comes back as a replay once it is stored (answered only under the lab's in-flight=answer-409)", true},
	{engine.CodeNotEnoughSeats, 409, "Not enough seats", "nothing", "Book fewer seats, or another event; the same key may be used again", false},
	{engine.CodeEventStarted, 409, "Event started", "nothing", "Bookings for this event are closed", false},
	{CodeBodyTooLarge, 413, "Body too large", "nothing", "Send a body under 64 KiB", false},
	{CodeBodyEncoding, 415, "Content-Encoding not supported", "nothing", "Send the body as plain JSON, without Content-Encoding", false},
	{CodeExpectationUnsupported, 417, "Expectation not supported", "nothing", "Send no Expect other than 100-continue", false},
	{CodeHeadersTooLarge, 431, "Headers too large", "nothing", "Send fewer or shorter headers", false},
	{CodeInternal, 500, "Internal error", "unknown", "Retry with the same idempotency key: a booking that was stored comes back as a replay", true},
	{CodeTransferEncoding, 501, "Transfer-Encoding not supported", "nothing", "Send the body with Content-Length, or chunked", false},
	{CodeBadGateway, 502, "No answer from the API instance", "unknown", "Retry with the same idempotency key: a booking that was stored comes back as a replay", true},
	{CodeDatabaseBusy, 503, "Database busy", "unknown", "Retry in a moment with the same idempotency key", true},
	{CodeEventBusy, 503, "Event busy", "nothing", "Retry in a moment with the same idempotency key", true},
	{CodeSerializationFailure, 503, "Serialization failure", "nothing", "Retry in a moment with the same idempotency key: the booking ran into another transaction at REPEATABLE READ or SERIALIZABLE (40001) and was rolled back", true},
	{CodeDatabaseUnavailable, 503, "Database unavailable", "unknown", "Retry in a moment with the same idempotency key", true},
	{CodeDatabaseDown, 503, "Database down", "unknown", "Retry after Retry-After with the same idempotency key", true},
	{CodeTooManyConnections, 503, "Too many connections", "nothing", "Retry in a moment, on a new connection, with the same idempotency key", true},
	{CodeGatewayTimeout, 504, "API instance timed out", "unknown", "Retry with the same idempotency key: a booking that was stored comes back as a replay", true},
	{CodeHTTPVersion, 505, "HTTP version not supported", "nothing", "Use HTTP/1.0 or HTTP/1.1", false},
}

// Problems returns every problem type the API answers with, in the order
// of their statuses.
func Problems() []ProblemType { return slices.Clone(problemTypes) }

// problemOf returns the problem type of code; a code outside the catalogue
// (net/http's rare own refusals, named after their status) gets a title of
// its status and no advice.
func problemOf(code string, status int) ProblemType {
	if i := slices.IndexFunc(problemTypes, func(p ProblemType) bool { return p.Code == code }); i >= 0 {
		return problemTypes[i]
	}
	return ProblemType{Code: code, Status: status, Title: http.StatusText(status), Stored: "nothing"}
}

// problemJSON is an Error on the wire: RFC 9457's members and the code.
type problemJSON struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// MarshalJSON writes e as a problem details object (RFC 9457): type (the
// code's documentation), title, status, detail (this occurrence, for a
// person) and code.
func (e *Error) MarshalJSON() ([]byte, error) {
	p := problemOf(e.Code, e.Status)
	return json.Marshal(problemJSON{Type: ProblemBase + e.Code, Title: p.Title, Status: e.Status, Detail: e.Message, Code: e.Code})
}

// UnmarshalJSON reads a problem details object back into an Error.
func (e *Error) UnmarshalJSON(b []byte) error {
	var p problemJSON
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = Error{Status: p.Status, Code: p.Code, Message: p.Detail}
	return nil
}

// retryAfterOf is the Retry-After of an answer with e, or "" when its
// advice is not to retry.
func retryAfterOf(e *Error) string {
	switch {
	case e.retryAfter != "":
		return e.retryAfter
	case problemOf(e.Code, e.Status).Retry:
		return RetryAfter
	}
	return ""
}

// writeProblem answers with e as application/problem+json, with
// Retry-After when its advice is to retry.
func writeProblem(w http.ResponseWriter, e *Error) {
	if after := retryAfterOf(e); after != "" {
		w.Header().Set("Retry-After", after)
	}
	w.Header().Set("Content-Type", ContentTypeProblem)
	w.WriteHeader(e.Status)
	writeJSONTo(w, e)
}

// problemBytes is e as a whole HTTP/1.1 answer that closes the
// connection, for the answers written below net/http.
func problemBytes(e *Error) []byte {
	var body bytes.Buffer
	writeJSONTo(&body, e)
	head := "HTTP/1.1 " + strconv.Itoa(e.Status) + " " + http.StatusText(e.Status) + "\r\nContent-Type: " + ContentTypeProblem + "\r\n"
	if after := retryAfterOf(e); after != "" {
		head += "Retry-After: " + after + "\r\n"
	}
	head += "Connection: close\r\nContent-Length: " + strconv.Itoa(body.Len()) + "\r\n\r\n"
	return append([]byte(head), body.Bytes()...)
}

// ParseProblem reads an answer body of this API that is not 200, strictly:
// the five members of problemJSON and no others, a type that is the
// code's, a title. Tests use it to hold every answer to the shape.
func ParseProblem(b []byte) (*Error, error) {
	var p problemJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("not problem details: %w", err)
	}
	switch {
	case p.Code == "" || p.Status == 0 || p.Detail == "" || p.Title == "":
		return nil, fmt.Errorf("problem details without code, status, detail or title: %s", b)
	case p.Type != ProblemBase+p.Code:
		return nil, fmt.Errorf("problem type %q, want %q", p.Type, ProblemBase+p.Code)
	}
	return &Error{Status: p.Status, Code: p.Code, Message: p.Detail}, nil
}
