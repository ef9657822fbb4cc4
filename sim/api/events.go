package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/learn-idempotency/learn/sim/engine"
)

// The limits of an event made by POST /events.
const (
	MaxEventSeats    = 1_000_000
	MaxEventName     = 100 // characters
	eventStartsAfter = 30 * 24 * time.Hour
)

// eventBodyExample is a body of POST /events, as the errors quote it.
const eventBodyExample = `{"name": "Workshop night", "seats": 10}`

// handleAddEvent makes an event: any user may, so that a checker (learn
// check) gets an event of its own with the seats it needs. The event
// starts 30 days from the instance's clock. 201 with the event and its
// Location; 400 invalid_body for a body that is not {"name", "seats"}
// within the limits.
func (a *API) handleAddEvent(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.user(r); !ok {
		a.fail(w, r, errUnauthorized())
		return
	}
	if ce := strings.TrimSpace(r.Header.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") {
		a.fail(w, r, errBodyEncoding(ce))
		return
	}
	if r.ContentLength > MaxBodyBytes {
		a.fail(w, r, errBodyTooLarge())
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		a.fail(w, r, bodyReadError(err))
		return
	}
	var body struct {
		Name  *string `json:"name"`
		Seats *int64  `json:"seats"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	bad := func(format string, args ...any) {
		a.fail(w, r, errBadRequest(CodeInvalidBody, fmt.Sprintf(format, args...)))
	}
	if err := dec.Decode(&body); err != nil {
		bad("The body must be one JSON object like %s: %s", eventBodyExample, cutForLog(err.Error()))
		return
	}
	if dec.More() {
		bad("The body must be one JSON object like %s, and nothing after it", eventBodyExample)
		return
	}
	switch {
	case body.Name == nil || body.Seats == nil:
		bad("The body needs both name and seats, like %s", eventBodyExample)
		return
	case strings.TrimSpace(*body.Name) == "" || utf8.RuneCountInString(*body.Name) > MaxEventName || !utf8.ValidString(*body.Name):
		bad("name must be 1 to %d characters of text", MaxEventName)
		return
	case *body.Seats < 0 || *body.Seats > MaxEventSeats:
		bad("seats must be from 0 to %d, got %d", MaxEventSeats, *body.Seats)
		return
	}
	ev, err := engine.AddEvent(r.Context(), a.Engine.Pool(), strings.TrimSpace(*body.Name), int(*body.Seats), a.Engine.Clock.Now().Add(eventStartsAfter))
	if err != nil {
		a.fail(w, r, a.failed(r.Context(), "add event", err))
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/events/%d", ev.ID))
	writeJSON(w, http.StatusCreated, ev)
}
