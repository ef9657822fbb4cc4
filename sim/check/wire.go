package check

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Wire is the checked API's shape, made from its Config: a client.Wire
// for learn's own client and lossy network. The client's token is a
// user's name; Wire sends that user's headers.
type Wire struct{ c *Config }

// NewWire is the wire of c (a Config from Parse).
func NewWire(c *Config) *Wire { return &Wire{c} }

// Request writes one try of in as the config says: its method and path
// from base, the body with the intent's event and quantity, the user's
// headers, the key header, and learn's X-Request-Id naming the try.
func (w *Wire) Request(ctx context.Context, base, token string, in client.Intent) (*http.Request, error) {
	i := slices.IndexFunc(w.c.Users, func(u User) bool { return u.Name == token })
	if i < 0 {
		return nil, fmt.Errorf("no user %q in the config", token)
	}
	fill := strings.NewReplacer("{event}", strconv.FormatInt(in.EventID, 10), "{quantity}", strconv.Itoa(in.Quantity))
	req, err := http.NewRequestWithContext(ctx, w.c.Request.Method, strings.TrimSuffix(base, "/")+fill.Replace(w.c.Request.Path), strings.NewReader(fill.Replace(w.c.Request.Body)))
	if err != nil {
		return nil, err
	}
	for k, v := range w.c.Users[i].Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", w.c.Request.ContentType)
	req.Header.Set(w.c.Request.KeyHeader, in.Key.String())
	req.Header.Set(api.HeaderRequestID, api.RequestID(trace.AttemptFrom(ctx)))
	return req, nil
}

// Answer reads one answer: a booked status with the booking's id at the
// config's pointer (and its user, event and quantity where the config
// points at them) is a booking; any other status is an error, with the
// code and detail of problem details (RFC 9457) when the body is one. A
// booked status without an id at the pointer is read as no booking.
func (w *Wire) Answer(status int, _ http.Header, body []byte) client.Answer {
	a := client.Answer{Status: status}
	if slices.Contains(w.c.Answer.Booked, status) {
		var doc any
		if json.Unmarshal(body, &doc) != nil {
			return a
		}
		id, ok := pointed(doc, w.c.Answer.BookingID)
		if !ok || id == "" {
			return a
		}
		b := &api.BookingJSON{ID: id}
		if v, ok := pointed(doc, w.c.Answer.User); ok {
			b.UserID = v
		}
		if v, ok := pointed(doc, w.c.Answer.Event); ok {
			b.EventID, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := pointed(doc, w.c.Answer.Quantity); ok {
			b.Quantity, _ = strconv.Atoi(v)
		}
		a.Booking = b
		return a
	}
	a.Error = errorOf(status, body)
	return a
}

// errorOf reads an answer that is not a booking: its code and detail
// (or title) when the body is problem details (RFC 9457), else its
// body, cut to 200 bytes.
func errorOf(status int, body []byte) *api.Error {
	e := &api.Error{Status: status, Message: strings.TrimSpace(string(body))}
	var p struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
		Title  string `json:"title"`
	}
	if json.Unmarshal(body, &p) == nil {
		e.Code = p.Code
		if p.Detail != "" {
			e.Message = p.Detail
		} else if p.Title != "" {
			e.Message = p.Title
		}
	}
	if len(e.Message) > 200 {
		e.Message = e.Message[:200] + "…"
	}
	return e
}

// pointersOf says which of the config's answer pointers (user, event,
// quantity) name nothing in a booked answer's body, or "" when each that
// is set names a value: a pointer that is given and wrong would leave
// what it reads unchecked.
func (w *Wire) pointersOf(body []byte) string {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return ""
	}
	var bad []string
	for _, p := range []struct{ name, ptr string }{{"answer.user", w.c.Answer.User}, {"answer.event", w.c.Answer.Event}, {"answer.quantity", w.c.Answer.Quantity}} {
		if p.ptr == "" {
			continue
		}
		v, ok := pointed(doc, p.ptr)
		if _, err := strconv.ParseInt(v, 10, 64); !ok || (p.name != "answer.user" && err != nil) {
			bad = append(bad, fmt.Sprintf("%s %s", p.name, p.ptr))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	verb := "names"
	if len(bad) > 1 {
		verb = "name"
	}
	return "not judged: in the API's booked answer, " + strings.Join(bad, " and ") + " " + verb + " no value of that kind (fix the pointer, or leave it out): " + cut(string(body), 200)
}

// Refused reports whether status is one the config says refuses.
func (w *Wire) Refused(status int) bool { return slices.Contains(w.c.Answer.Refused, status) }

// pointed is the value at pointer p in doc as text (a string as it is, a
// number in its shortest form); ok is false for an empty pointer or one
// that names nothing, or names an object or array.
func pointed(doc any, p string) (string, bool) {
	if p == "" {
		return "", false
	}
	ptr, err := parsePointer(p)
	if err != nil {
		return "", false
	}
	v, err := ptr.get(doc)
	if err != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// pointedValue is the JSON value at pointer p in doc, whatever it is.
func pointedValue(doc any, p string) (any, error) {
	ptr, err := parsePointer(p)
	if err != nil {
		return nil, err
	}
	return ptr.get(doc)
}

// The wire must be a client.Wire.
var _ client.Wire = (*Wire)(nil)
