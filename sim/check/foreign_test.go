package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// showsAPI is a booking API that is not learn's, written here apart from
// package sim, on its own tables of a real PostgreSQL: shows instead of
// events, numeric ids, 201 for a booking, X-User for whose it is,
// X-Idempotency-Key, and plain-text errors. Its transaction locks the
// show's row and looks the key up, as the lesson says, but with
// keyByUser false it has its own bug: the key is unique on its own and
// looked up whoever sent it, so a second user with the same key is
// answered with the first user's ticket.
type showsAPI struct {
	pool      *pgxpool.Pool
	keyByUser bool
}

const showsSchema = `
CREATE TABLE shows (id bigserial PRIMARY KEY, title text NOT NULL, free int NOT NULL CHECK (free >= 0));
CREATE TABLE tickets (id bigserial PRIMARY KEY, show_id bigint NOT NULL REFERENCES shows, buyer text NOT NULL,
  seats int NOT NULL, idem text NOT NULL);
`

func (a *showsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buyer := r.Header.Get("X-User")
	if buyer == "" {
		http.Error(w, "who are you?", http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == "POST" && r.URL.Path == "/v2/shows":
		var in struct {
			Title string `json:"title"`
			Free  int    `json:"free"`
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(w, "bad show", http.StatusBadRequest)
			return
		}
		var id int64
		if err := a.pool.QueryRow(r.Context(), `INSERT INTO shows (title, free) VALUES ($1, $2) RETURNING id`, in.Title, in.Free).Scan(&id); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeShows(w, http.StatusCreated, map[string]any{"show": map[string]any{"id": id}})
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v2/shows/"):
		var free int
		if err := a.pool.QueryRow(r.Context(), `SELECT free FROM shows WHERE id = $1`, strings.TrimPrefix(r.URL.Path, "/v2/shows/")).Scan(&free); err != nil {
			http.Error(w, "no such show", http.StatusNotFound)
			return
		}
		writeShows(w, http.StatusOK, map[string]any{"free": free})
	case r.Method == "GET" && r.URL.Path == "/v2/tickets":
		rows, _ := a.pool.Query(r.Context(), `SELECT id, show_id, seats, idem FROM tickets WHERE buyer = $1 ORDER BY id`, buyer)
		type ticket struct {
			ID    int64  `json:"id"`
			Show  int64  `json:"show"`
			Seats int    `json:"seats"`
			Idem  string `json:"idem"`
		}
		list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ticket])
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeShows(w, http.StatusOK, map[string]any{"data": list})
	case r.Method == "POST" && r.URL.Path == "/v2/tickets":
		a.buy(w, r, buyer)
	default:
		http.NotFound(w, r)
	}
}

// buy sells seats of a show under the request's key, in one transaction.
func (a *showsAPI) buy(w http.ResponseWriter, r *http.Request, buyer string) {
	var in struct {
		Show  int64 `json:"show"`
		Seats int   `json:"seats"`
	}
	key := r.Header.Get("X-Idempotency-Key")
	if json.NewDecoder(r.Body).Decode(&in) != nil || key == "" || in.Seats < 1 {
		http.Error(w, "bad ticket", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var free int
	if err := tx.QueryRow(ctx, `SELECT free FROM shows WHERE id = $1 FOR UPDATE`, in.Show).Scan(&free); err != nil {
		http.Error(w, "no such show", http.StatusNotFound)
		return
	}
	lookup, args := `SELECT id, show_id, seats, buyer FROM tickets WHERE idem = $1 AND buyer = $2`, []any{key, buyer}
	if !a.keyByUser {
		lookup, args = `SELECT id, show_id, seats, buyer FROM tickets WHERE idem = $1`, []any{key} // the bug
	}
	var t struct {
		ID, Show int64
		Seats    int
		Buyer    string
	}
	err = tx.QueryRow(ctx, lookup, args...).Scan(&t.ID, &t.Show, &t.Seats, &t.Buyer)
	switch {
	case err == nil && (t.Show != in.Show || t.Seats != in.Seats):
		http.Error(w, "this key was used for another ticket", http.StatusUnprocessableEntity)
		return
	case err == nil:
		writeShows(w, http.StatusCreated, map[string]any{"ticket": map[string]any{"id": t.ID, "show": t.Show, "seats": t.Seats}})
		return
	case !errors.Is(err, pgx.ErrNoRows):
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if free < in.Seats {
		http.Error(w, "sold out", http.StatusConflict)
		return
	}
	if _, err := tx.Exec(ctx, `UPDATE shows SET free = free - $1 WHERE id = $2`, in.Seats, in.Show); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var id int64
	err = tx.QueryRow(ctx, `INSERT INTO tickets (show_id, buyer, seats, idem) VALUES ($1, $2, $3, $4) RETURNING id`, in.Show, buyer, in.Seats, key).Scan(&id)
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == "23505" {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if err != nil || tx.Commit(ctx) != nil {
		http.Error(w, "could not sell", http.StatusInternalServerError)
		return
	}
	writeShows(w, http.StatusCreated, map[string]any{"ticket": map[string]any{"id": id, "show": in.Show, "seats": in.Seats}})
}

func writeShows(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// startShows serves the shows API on a schema of its own, keys unique
// per buyer or (keyByUser false) on their own.
func startShows(t *testing.T, keyByUser bool) string {
	t.Helper()
	sc, err := testDB.NewSchema(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Drop(context.Background()) })
	pool, err := pgxpool.New(t.Context(), sc.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	unique := `ALTER TABLE tickets ADD UNIQUE (buyer, idem)`
	if !keyByUser {
		unique = `ALTER TABLE tickets ADD UNIQUE (idem)`
	}
	if _, err := pool.Exec(t.Context(), showsSchema+unique); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&showsAPI{pool: pool, keyByUser: keyByUser})
	t.Cleanup(srv.Close)
	return srv.URL
}

// showsConfig is the config a user of the shows API would write.
func showsConfig(t *testing.T, base string) *Config {
	t.Helper()
	c, err := Parse([]byte(fmt.Sprintf(`
urls = [%q]
[request]
path = "/v2/tickets"
body = '{"show": {event}, "seats": {quantity}}'
key_header = "X-Idempotency-Key"
[[users]]
name = "ann"
headers = { X-User = "ann" }
[[users]]
name = "bob"
headers = { X-User = "bob" }
[answer]
booked = [201]
refused = [409, 422]
booking_id = "/ticket/id"
event = "/ticket/show"
quantity = "/ticket/seats"
[event.create]
path = "/v2/shows"
body = '{"title": "check", "free": {seats}}'
id = "/show/id"
[seats]
path = "/v2/shows/{event}"
left = "/free"
[bookings]
path = "/v2/tickets"
list = "/data"
id = "/id"
key = "/idem"
event = "/show"
quantity = "/seats"
`, base)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The check runs against a booking API that is not learn's and catches
// its bug, a key looked up whoever sent it, with the scenario of two
// users and one key (a data leak), and only there; the same API with the
// key scoped to its buyer passes every scenario it can be given.
func TestTheCheckCatchesAnotherAPIsBug(t *testing.T) {
	for _, keyByUser := range []bool{true, false} {
		t.Run(fmt.Sprintf("key by user %v", keyByUser), func(t *testing.T) {
			res, err := Run(t.Context(), showsConfig(t, startShows(t, keyByUser)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, row := range res.Rows {
				switch {
				case row.Name == "other-instance":
					if row.State != NotRun {
						t.Errorf("%s with one base URL: %s %s", row.Name, row.State, row.Says)
					}
				case row.State == Fail:
					failed = append(failed, row.Name)
					t.Logf("%s: %s", row.Name, row.Says)
				case row.State != Pass:
					t.Errorf("%s: %s %s", row.Name, row.State, row.Says)
				}
			}
			want := []string{}
			if !keyByUser {
				want = []string{"two-users-same-key"}
			}
			if !slices.Equal(append([]string{}, failed...), want) {
				t.Errorf("failed %v, want %v", failed, want)
			}
			if !keyByUser {
				row := res.Rows[slices.IndexFunc(res.Rows, func(r Row) bool { return r.Name == "two-users-same-key" })]
				if !strings.HasPrefix(row.Says, "shown another user's booking, a data leak: bob got ann's booking") {
					t.Errorf("two users: %q", row.Says)
				}
			}
		})
	}
}
