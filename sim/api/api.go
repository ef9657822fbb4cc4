package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// HeaderIdempotencyKey carries the booking intent's key on POST /bookings.
const HeaderIdempotencyKey = "Idempotency-Key"

// HeaderRequestID carries "<intent>.<try>" from learn's browser client so the
// API and the engine can tag their trace events and log lines; any other
// value is logged cut to its first 40 bytes.
const HeaderRequestID = "X-Request-Id"

// HeaderReplayed is "true" on a 200 that replays the booking an earlier
// request with the same key made (Stripe's name); the body is the first
// answer's.
const HeaderReplayed = "Idempotent-Replayed"

// HeaderInstance names, on every answer, the API instance that gave it.
const HeaderInstance = "X-Learn-Instance"

// The demo users and their bearer tokens. The API takes the user from the
// token, never from the request body.
const (
	TokenAda = "tok-ada"
	TokenBen = "tok-ben"
)

// DemoUsers maps each demo bearer token to its user id.
func DemoUsers() map[string]string { return map[string]string{TokenAda: "ada", TokenBen: "ben"} }

// API is one API instance: the HTTP front of an Engine.
//
//	POST /bookings   {"event_id": 1, "quantity": 2}
//	                 Authorization: Bearer <token>, Idempotency-Key: <uuid>
//	                 (bare, or quoted as a structured-field string; see
//	                 parseKey; at most MaxKeyBytes)
//	                 200 BookResponse (first booking, or its replay with
//	                 Idempotent-Replayed: true); 400, 401, 404, 409, 500 or
//	                 503 problem details (Error)
//	GET  /events     200 [engine.EventRow]
//	GET  /events/{id} 200 engine.EventRow, 404
//	GET  /bookings   200 [BookingJSON] of the caller
//
// The user is the one the bearer token belongs to (Users), never a field of
// the body.
type API struct {
	Engine *engine.Engine
	Users  map[string]string // bearer token → user id
	Log    *slog.Logger
	// Keys, when set, is where this instance remembers idempotency keys
	// instead of the booking row: a broken design (see KeyStore).
	Keys KeyStore
	// Outage, when set, says whether the PostgreSQL under the instance is
	// known to be down (OutageReporter): a database error met meanwhile is
	// answered 503 database_down, saying so.
	Outage func() *Outage
	// Barrier, when set with Keys, holds every booking request right after
	// its lookup in Keys until all the copies it expects have looked up
	// too (or left): the forced interleaving of a design that keeps its
	// keys outside the row, where the lookup is the store's, not the
	// engine's (Engine.Barrier).
	Barrier *engine.Barrier
	// Design names the design this instance runs when it is not the
	// lesson's (learn serve --set): its /openapi.json says so.
	Design string

	contractOnce sync.Once
	contractDoc  []byte
}

// Handler returns the API's routes.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /bookings", a.handleBook)
	mux.HandleFunc("GET /bookings", a.handleListBookings)
	mux.HandleFunc("GET /events", a.handleListEvents)
	mux.HandleFunc("POST /events", a.handleAddEvent)
	mux.HandleFunc("GET /events/{id}", a.handleGetEvent)
	mux.HandleFunc("GET /openapi.json", a.handleOpenAPI)
	// Every other answer is JSON too: a wrong method on a known path (with
	// the Allow that RFC 9110 asks of a 405), and any unknown path.
	for path, allow := range map[string]string{"/bookings": "GET, POST", "/events": "GET, POST", "/events/{id}": "GET", "/openapi.json": "GET"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			a.fail(w, r, &Error{Status: http.StatusMethodNotAllowed, Code: CodeBadMethod,
				Message: fmt.Sprintf("%s is not allowed on %s: POST /bookings books, POST /events adds an event, GET /bookings and GET /events read", cutForLog(r.Method), cutForLog(r.URL.Path))})
		})
	}
	notFound := func(w http.ResponseWriter, r *http.Request) {
		a.fail(w, r, &Error{Status: http.StatusNotFound, Code: CodeNotFound,
			Message: fmt.Sprintf("No %s here: the API has POST /bookings, GET /bookings, POST /events, GET /events and GET /events/{id}", cutForLog(r.URL.Path))})
	}
	mux.HandleFunc("/", notFound)
	// The mux answers a path that is not clean ("/../../etc/passwd",
	// "//events", OPTIONS's "*") with an HTML redirect to the cleaned one;
	// no route of the API has such a path, so it is a JSON 404 here.
	return a.logged(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; !strings.HasPrefix(p, "/") || path.Clean(p) != p {
			notFound(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	}))
}

func (a *API) handleBook(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	user, ok := a.user(r)
	if !ok {
		a.fail(w, r, errUnauthorized())
		return
	}
	key, refusal := parseKey(r.Header)
	if refusal != nil {
		a.fail(w, r, refusal)
		return
	}
	body, refusal := decodeBookBody(w, r)
	if refusal != nil {
		a.fail(w, r, refusal)
		return
	}
	req := engine.Request{UserID: user, EventID: body.EventID, Quantity: body.Quantity, Key: key}
	if err := req.Validate(); err != nil {
		a.fail(w, r, errorOf(err.(*engine.Refusal)))
		return
	}
	res, err := a.Book(ctx, req)
	if errors.Is(err, engine.ErrCrash) {
		// The process is gone: no answer, the connection just drops.
		panic(http.ErrAbortHandler)
	}
	if refusal, ok := errors.AsType[*engine.Refusal](err); ok {
		a.fail(w, r, errorOf(refusal))
		return
	}
	if err != nil {
		a.fail(w, r, a.failed(ctx, "booking failed", err, "key", key.String()))
		return
	}
	if res.Replayed {
		a.Log.DebugContext(ctx, "replayed for a repeated idempotency key",
			"booking", res.Booking.PublicID(), "user", user, "key", key.String())
	}
	if res.Replayed {
		w.Header().Set(HeaderReplayed, "true")
	}
	writeJSON(w, http.StatusOK, BookResponse{Booking: bookingJSON(res.Booking)})
}

// Book books req as this instance does for POST /bookings: through the
// engine, or, when the instance keeps its keys in a KeyStore, asking the
// store first and telling it afterwards: two separate writes with no
// transaction between them. Its results and errors are the engine's
// (a *engine.Refusal for a refusal, engine.ErrCrash for a crash), or the
// store's.
//
// With a Barrier, a request waits there after its lookup; one the store
// answers, or that fails before, leaves it, so that the copies it was to
// meet are not kept waiting for it.
func (a *API) Book(ctx context.Context, req engine.Request) (engine.Result, error) {
	if a.Keys == nil {
		return a.Engine.BookTicket(ctx, req)
	}
	// In flight from the store's lookup to its write (Engine.AwaitKey).
	defer a.Engine.Fly(req)()
	// A client's retry is none of the copies the barrier waits for
	// (Engine.BookTicket): it passes.
	held := a.Barrier != nil && trace.AttemptFrom(ctx).Try > 1
	if b := a.Barrier; b != nil && !held {
		defer func() {
			if !held {
				b.Leave()
			}
		}()
	}
	id, found, err := a.Keys.Get(ctx, req.UserID, req.Key)
	if err != nil {
		return engine.Result{}, err
	}
	get, set := "GET key", "SET key "
	if a.Keys.Lane() == "" { // the instance's own memory
		get, set = "memory: key", "memory: key → "
	}
	if found {
		// The key's SET (and its booking's COMMIT) may be done but not
		// yet told: tell them first.
		if err := a.Engine.Trace.AwaitWrites(ctx, req.Key.String()); err != nil {
			return engine.Result{}, err
		}
	}
	label, text := get+" → none", fmt.Sprintf("%s has no key %s", a.Keys.Describe(), trace.ShortKey(req.Key))
	if found {
		label, text = get+" → "+engine.PublicBookingID(id), fmt.Sprintf("%s remembers key %s: %s", a.Keys.Describe(), trace.ShortKey(req.Key), engine.PublicBookingID(id))
	}
	if err := a.keyStep(ctx, req, label, text, found); err != nil {
		return engine.Result{}, err
	}
	if found {
		// The store names a booking: compare it with the request as the
		// engine compares what its lookup finds (Engine.Compare).
		b, err := a.Engine.BookingByID(ctx, id)
		if err != nil {
			return engine.Result{}, err
		}
		if b.Key == uuid.Nil {
			// The row's key expired (a sweeper) while the store still
			// remembers it: the store matched the request's.
			b.Key = req.Key
		}
		res, refusal := a.Engine.Compare(b, req)
		if refusal != nil {
			return engine.Result{}, refusal
		}
		return res, nil
	}
	if a.Barrier != nil && !held {
		if err := a.Engine.Hold(ctx, req, a.Barrier, engine.PointAfterLookup, &held); err != nil {
			return engine.Result{}, err
		}
	}
	res, err := a.Engine.BookTicket(ctx, req)
	if err != nil || res.Replayed {
		return res, err
	}
	told := a.Engine.Trace.Writing(req.Key.String())
	defer told()
	if err := a.Keys.Put(ctx, req.UserID, req.Key, res.Booking.ID); err != nil {
		return engine.Result{}, err
	}
	return res, a.keyStep(ctx, req, set+res.Booking.PublicID(),
		fmt.Sprintf("%s now remembers key %s: %s", a.Keys.Describe(), trace.ShortKey(req.Key), res.Booking.PublicID()), false)
}

// keyStep tells a step of the key store; found marks a GET that found the key.
func (a *API) keyStep(ctx context.Context, req engine.Request, label, text string, found bool) error {
	to := a.Keys.Lane()
	if to == "" {
		to = a.Engine.Lane
	}
	return a.Engine.Trace.Emit(ctx, trace.Event{Kind: trace.KindKeyStore, From: a.Engine.Lane, To: to,
		Key: req.Key.String(), Label: label, Text: text, Found: found})
}

func (a *API) handleGetEvent(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) || (err == nil && id < 1):
		a.fail(w, r, errBadRequest(CodeInvalidEvent, fmt.Sprintf("event id %s is out of range: %s", quoteShort(r.PathValue("id")), eventIDRange)))
		return
	case err != nil:
		a.fail(w, r, errBadRequest(CodeInvalidEvent, fmt.Sprintf("event id %s is not a number", quoteShort(r.PathValue("id")))))
		return
	}
	ev, found, err := engine.ReadEvent(r.Context(), a.Engine.Pool(), id)
	if err != nil {
		a.fail(w, r, a.failed(r.Context(), "read event", err))
		return
	}
	if !found {
		a.fail(w, r, errorOf(engine.RefuseNoEvent(id)))
		return
	}
	writeJSON(w, http.StatusOK, ev)
}

func (a *API) handleListEvents(w http.ResponseWriter, r *http.Request) {
	rows, err := engine.ReadRows(r.Context(), a.Engine.Pool())
	if err != nil {
		a.fail(w, r, a.failed(r.Context(), "read events", err))
		return
	}
	writeJSON(w, http.StatusOK, nonNil(rows.Events))
}

func (a *API) handleListBookings(w http.ResponseWriter, r *http.Request) {
	user, ok := a.user(r)
	if !ok {
		a.fail(w, r, errUnauthorized())
		return
	}
	out, err := engine.ReadBookings(r.Context(), a.Engine.Pool(), user)
	if err != nil {
		a.fail(w, r, a.failed(r.Context(), "read bookings", err))
		return
	}
	writeJSON(w, http.StatusOK, nonNil(out))
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (a *API) user(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") { // the scheme is case-insensitive (RFC 9110)
		return "", false
	}
	u, ok := a.Users[strings.TrimSpace(token)]
	return u, ok
}

// fail answers with e as problem details; an answer whose advice is to
// retry says when (Retry-After).
func (a *API) fail(w http.ResponseWriter, r *http.Request, e *Error) {
	writeProblem(w, e)
}

// failed logs an error of the database met while serving a request and
// returns the answer: 503 database_down while the server is known to be
// down (Outage; a debug line, since its outage is told once), 503 when the
// database cannot take the request now (dbRefusal; a warning), 503 unread
// when the request itself was cut (its client went away, or learn serve is
// stopping; the request's line says so), else 500 (an error line).
func (a *API) failed(ctx context.Context, msg string, err error, attrs ...any) *Error {
	attrs = append([]any{"err", err}, attrs...)
	if ctx.Err() != nil { // the request's line says so
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeDatabaseUnavailable, Message: "The request was cut before its answer; retry with the same idempotency key"}
	}
	if a.Outage != nil {
		if o := a.Outage(); o != nil {
			// The server's watcher has said it (learn serve logs it once):
			// the request's line is enough here.
			a.Log.DebugContext(ctx, msg, attrs...)
			return o.answer()
		}
	}
	if e := dbRefusal(ctx, err, a.Engine.Lane, a.Engine.Pool(), a.Engine.Design); e != nil {
		a.Log.WarnContext(ctx, msg, attrs...)
		return e
	}
	a.Log.ErrorContext(ctx, msg, attrs...)
	return errInternal()
}

// statusRecorder remembers the status a handler wrote, for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logged tags the request context with the learn client's attempt and logs
// one line per request once it is answered.
func (a *API) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		reqID := r.Header.Get(HeaderRequestID)
		if at, ok := ParseRequestID(reqID); ok {
			ctx = trace.WithAttempt(ctx, at)
		}
		w.Header().Set(HeaderInstance, a.Engine.Lane)
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(ctx))
		attrs := []any{"status", rec.status}
		if k := keyForLog(r.Header); k != "" {
			attrs = append(attrs, "key", k)
		}
		if reqID != "" {
			attrs = append(attrs, "request", cutForLog(reqID))
		}
		if stopping(ctx) {
			attrs = append(attrs, "cut", errStopping.Error())
		}
		a.Log.InfoContext(ctx, cutForLog(r.Method)+" "+cutForLog(r.URL.Path), attrs...)
	})
}

// RequestID formats an attempt as the X-Request-Id header value:
// "<intent>.<try>", or "<intent>.<copy>.<try>" for a copy.
func RequestID(at trace.Attempt) string {
	if at.Copy > 0 {
		return fmt.Sprintf("%d.%d.%d", at.Intent, at.Copy, at.Try)
	}
	return fmt.Sprintf("%d.%d", at.Intent, at.Try)
}

// ParseRequestID reads an X-Request-Id value that RequestID wrote; ok is
// false for any other.
func ParseRequestID(v string) (trace.Attempt, bool) {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return trace.Attempt{}, false
	}
	n := make([]int, len(parts))
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 1 {
			return trace.Attempt{}, false
		}
		n[i] = x
	}
	if len(n) == 2 {
		return trace.Attempt{Intent: n[0], Try: n[1]}, true
	}
	return trace.Attempt{Intent: n[0], Copy: n[1], Try: n[2]}, true
}
