// The harness of learn's exercises: a booking API in the shape of learn
// serve's, whose booking transaction is yours (booking.go). Do not edit
// this file: learn builds the module, starts it once per API instance a
// scenario needs, and drives it over HTTP with the lesson's scenarios.
//
//	POST /events    {"name": "…", "seats": N}          → 201 {"id": N}
//	GET  /events/ID                                     → {"id": N, "seats_left": N}
//	POST /bookings  {"event_id": N, "quantity": N}
//	                Authorization: Bearer tok-ada (or tok-ben), Idempotency-Key: a UUID
//	                → 201 a new booking, 200 a replay: {"booking": {…}}; a refusal as problem details
//	GET  /bookings  the user's bookings, oldest first
//
// It listens on -addr (127.0.0.1:0: a free port) and says "listening on
// http://ADDR" on standard output; DATABASE_URL is its PostgreSQL, with
// the tables of schema.sql. Each answer names the instance (-name) in
// X-Learn-Instance. A request sent with X-Learn-Fault: crash-before-commit
// crashes at COMMIT (learn.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// booking is held while learn's checks call your Book.
var booking sync.Mutex

// users are the API's users, by bearer token.
var users = map[string]string{"tok-ada": "ada", "tok-ben": "ben"}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "the address to listen on")
	name := flag.String("name", "api-1", "the API instance's name, in X-Learn-Instance")
	isolation := flag.String("isolation", "", "the database's default isolation level for its transactions (e.g. \"repeatable read\"; default PostgreSQL's)")
	gated := flag.Bool("gate", false, "hold each statement of learn's requests until learn lets it go (learn plays the run; \"go N\" lines on standard input)")
	flag.Parse()
	if *gated {
		gate = newGate(os.Stdin)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *name, *isolation); err != nil {
		fmt.Fprintln(os.Stderr, "booking API:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr, name, isolation string) error {
	cfg, err := pgxpool.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	if isolation != "" {
		cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = isolation
	}
	cfg.ConnConfig.Tracer = tracer{}
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer db.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: faults(name, routes(db)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func routes(db *pgxpool.Pool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /learn/book", func(w http.ResponseWriter, r *http.Request) {
		// learn's checks of your client: one call of your Book, against
		// the base URL learn gives (its proxy), with learn's waits.
		var in struct {
			Base      string            `json:"base"`
			Header    map[string]string `json:"header"`
			EventID   int64             `json:"event_id"`
			Quantity  int               `json:"quantity"`
			BackoffMS []int             `json:"backoff_ms"`
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil {
			problem(w, &Refusal{Status: 400, Code: "bad_request", Message: "learn's harness: not a call of Book"})
			return
		}
		booking.Lock() // one call at a time: Backoff is shared
		defer booking.Unlock()
		Backoff = nil
		for _, ms := range in.BackoffMS {
			Backoff = append(Backoff, time.Duration(ms)*time.Millisecond)
		}
		header := http.Header{}
		for k, v := range in.Header {
			header.Set(k, v)
		}
		limit, each := 30*time.Second, 5*time.Second
		if gate != nil {
			limit, each = time.Hour, time.Hour // learn plays the run: each step waits for the learner
		}
		ctx, cancel := context.WithTimeout(r.Context(), limit)
		defer cancel()
		status, _, err := Book(ctx, &http.Client{Timeout: each}, in.Base, header, in.EventID, in.Quantity)
		said := map[string]any{"status": status}
		if err != nil {
			said["error"] = err.Error()
		}
		answer(w, http.StatusOK, said)
	})
	mux.HandleFunc("GET /learn/sync", func(w http.ResponseWriter, r *http.Request) {
		// learn's barrier: every statement reported before this line has
		// been written to standard output.
		out.Lock()
		fmt.Fprintf(os.Stdout, "learn-sync %s\n", strings.Map(func(r rune) rune {
			if r < '!' || r > '~' {
				return -1
			}
			return r
		}, r.URL.Query().Get("token")))
		out.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /events", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Name  string `json:"name"`
			Seats int    `json:"seats"`
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.Seats < 0 {
			problem(w, &Refusal{Status: 400, Code: "bad_request", Message: `give {"name": "…", "seats": N}`})
			return
		}
		var id int64
		err := db.QueryRow(r.Context(), `INSERT INTO events (name, seats_left, starts_at) VALUES ($1, $2, now() + interval '30 days') RETURNING id`, in.Name, in.Seats).Scan(&id)
		if err != nil {
			problem(w, err)
			return
		}
		answer(w, http.StatusCreated, map[string]int64{"id": id})
	})
	mux.HandleFunc("GET /events/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		var left int
		err := db.QueryRow(r.Context(), `SELECT seats_left FROM events WHERE id = $1`, id).Scan(&left)
		if errors.Is(err, pgx.ErrNoRows) {
			problem(w, &Refusal{Status: 404, Code: "event_not_found", Message: fmt.Sprintf("There is no event %d", id)})
			return
		}
		if err != nil {
			problem(w, err)
			return
		}
		answer(w, http.StatusOK, map[string]any{"id": id, "seats_left": left})
	})
	mux.HandleFunc("POST /bookings", func(w http.ResponseWriter, r *http.Request) {
		user, ok := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			problem(w, &Refusal{Status: 401, Code: "unauthorized", Message: "send Authorization: Bearer tok-ada (or tok-ben)"})
			return
		}
		key, err := uuid.Parse(r.Header.Get("Idempotency-Key"))
		if err != nil {
			problem(w, &Refusal{Status: 400, Code: "bad_key", Message: "send an Idempotency-Key header holding a UUID"})
			return
		}
		var in struct {
			EventID  int64 `json:"event_id"`
			Quantity int   `json:"quantity"`
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.Quantity < 1 {
			problem(w, &Refusal{Status: 400, Code: "bad_request", Message: `give {"event_id": N, "quantity": N}, quantity at least 1`})
			return
		}
		a, err := BookTicket(r.Context(), db, Request{UserID: user, EventID: in.EventID, Quantity: in.Quantity, Key: key})
		if err != nil {
			problem(w, err)
			return
		}
		status := http.StatusCreated
		if a.Replayed {
			status = http.StatusOK
			w.Header().Set("Idempotent-Replayed", "true")
		}
		answer(w, status, map[string]bookingJSON{"booking": jsonOf(a.Booking)})
	})
	mux.HandleFunc("GET /bookings", func(w http.ResponseWriter, r *http.Request) {
		user, ok := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			problem(w, &Refusal{Status: 401, Code: "unauthorized", Message: "send Authorization: Bearer tok-ada (or tok-ben)"})
			return
		}
		rows, err := db.Query(r.Context(), `SELECT id, user_id, event_id, quantity, idempotency_key, created_at FROM bookings WHERE user_id = $1 ORDER BY id`, user)
		if err != nil {
			problem(w, err)
			return
		}
		list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (bookingJSON, error) {
			var b Booking
			err := row.Scan(&b.ID, &b.UserID, &b.EventID, &b.Quantity, &b.Key, &b.CreatedAt)
			return jsonOf(b), err
		})
		if err != nil {
			problem(w, err)
			return
		}
		answer(w, http.StatusOK, append([]bookingJSON{}, list...))
	})
	return mux
}

// bookingJSON is a booking as the API shows it: its id as "b" and the
// row's id.
type bookingJSON struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	EventID   int64     `json:"event_id"`
	Quantity  int       `json:"quantity"`
	Key       string    `json:"idempotency_key"`
	CreatedAt time.Time `json:"created_at"`
}

func jsonOf(b Booking) bookingJSON {
	return bookingJSON{ID: "b" + strconv.FormatInt(b.ID, 10), UserID: b.UserID, EventID: b.EventID, Quantity: b.Quantity, Key: b.Key.String(), CreatedAt: b.CreatedAt}
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// problem answers err: a *Refusal with its status, anything else as 500,
// in problem details (RFC 9457).
func problem(w http.ResponseWriter, err error) {
	var r *Refusal
	if !errors.As(err, &r) {
		r = &Refusal{Status: 500, Code: "internal", Message: err.Error()}
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(r.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": http.StatusText(r.Status), "status": r.Status, "detail": r.Message, "code": r.Code})
}
