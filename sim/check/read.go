package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/sim/engine"
)

// reader reads what the checked API did, straight from the API (not
// through the proxy) or from its database: the events it adds, their
// seats, and the bookings that hold the check's keys. What the config
// gives no way to read is reported unseen.
type reader struct {
	cfg  *Config
	http *http.Client
	db   *pgx.Conn // nil without Config.Database
	// answered says the API answered one of the reader's requests.
	answered bool
}

// maxRead is the largest answer the reader reads.
const maxRead = 16 << 20

// newReader connects to the API's database when the config reads it with
// SQL; databaseURL is then required.
func newReader(ctx context.Context, cfg *Config, hc *http.Client, databaseURL string) (*reader, error) {
	r := &reader{cfg: cfg, http: hc}
	if cfg.Database == nil {
		return r, nil
	}
	if databaseURL == "" {
		return nil, errors.New("the config has a [database] table: give the API's database with --database-url (or the DATABASE_URL environment variable)")
	}
	pc, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	// The simple protocol: every column arrives as text, whatever its
	// type, which is how the check compares them.
	pc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	r.db, err = pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("could not reach the API's database (--database-url): %s", oneEach(err))
	}
	return r, nil
}

// oneEach is err's message with each of its lines once, on one line:
// pgx tries an address again without TLS (sslmode=prefer) and says the
// same dial error for each try.
func oneEach(err error) string {
	var lines []string
	for l := range strings.Lines(err.Error()) {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, " ")
}

func (r *reader) close() {
	if r.db != nil {
		_ = r.db.Close(context.Background())
	}
}

// sqlTimeout bounds each of the config's queries.
const sqlTimeout = 10 * time.Second

// readOnly runs f in a read-only transaction with a statement timeout,
// then rolls it back: the config's SQL reads, whatever it says.
func (r *reader) readOnly(ctx context.Context, f func(pgx.Tx) error) error {
	tx, err := r.db.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", sqlTimeout.Milliseconds())); err != nil {
		return err
	}
	return f(tx)
}

// do sends a request of user's to the API's first base URL and decodes
// its JSON answer, which must have a 2xx status.
func (r *reader) do(ctx context.Context, method, path string, user User, body string) (any, error) {
	return r.doAt(ctx, r.cfg.URLs[0], method, path, user, body)
}

// doAt is do at the base URL base.
func (r *reader) doAt(ctx context.Context, base, method, path string, user User, body string) (any, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(base, "/")+path, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range user.Headers {
		req.Header.Set(k, v)
	}
	if body != "" {
		req.Header.Set("Content-Type", r.cfg.Request.ContentType)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return nil, fmt.Errorf("the API at %s did not answer %s %s: %w", base, method, path, err)
	}
	defer resp.Body.Close()
	r.answered = true
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRead+1))
	if err != nil {
		return nil, fmt.Errorf("the API's answer to %s %s broke off: %w", method, path, err)
	}
	if len(b) > maxRead {
		return nil, fmt.Errorf("the API's answer to %s %s is over 16 MiB: learn check stopped reading it", method, path)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s %s answered %d: %s", method, path, resp.StatusCode, cut(string(b), 200))
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s %s answered %d with no JSON: %s", method, path, resp.StatusCode, cut(string(b), 200))
	}
	return doc, nil
}

// addEvent adds an event with seats seats (Config.Event.Create) and
// returns its id.
func (r *reader) addEvent(ctx context.Context, seats int) (int64, error) {
	ce := r.cfg.Event.Create
	doc, err := r.do(ctx, http.MethodPost, ce.Path, r.cfg.Users[0], strings.ReplaceAll(ce.Body, "{seats}", strconv.Itoa(seats)))
	if err != nil {
		return 0, fmt.Errorf("add an event (event.create): %w", err)
	}
	v, ok := pointed(doc, ce.ID)
	id, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil || id < 1 {
		return 0, fmt.Errorf("add an event (event.create): the answer has no event id at %s", ce.ID)
	}
	return id, nil
}

// seatsLeft reads the seats left of event; ok is false when the config
// gives no way to read them.
func (r *reader) seatsLeft(ctx context.Context, event int64) (n int, ok bool, err error) {
	switch {
	case r.cfg.Seats != nil:
		n, err := r.seatsAt(ctx, r.cfg.URLs[0], event)
		return n, true, err
	case r.db != nil && r.cfg.Database.Seats != "":
		var s string
		err := r.readOnly(ctx, func(tx pgx.Tx) error { return tx.QueryRow(ctx, r.cfg.Database.Seats, event).Scan(&s) })
		if err != nil {
			return 0, true, fmt.Errorf("read the seats (database.seats, given $1, the event's id, and returning its seats left): %w", err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return 0, true, fmt.Errorf("read the seats (database.seats): %q is not a whole number", s)
		}
		return n, true, nil
	}
	return 0, false, nil
}

// seatsAt reads the seats left of event with a GET of [seats] at the
// base URL base.
func (r *reader) seatsAt(ctx context.Context, base string, event int64) (int, error) {
	path := strings.ReplaceAll(r.cfg.Seats.Path, "{event}", strconv.FormatInt(event, 10))
	doc, err := r.doAt(ctx, base, http.MethodGet, path, r.cfg.Users[0], "")
	if err != nil {
		return 0, fmt.Errorf("read the seats (seats): %w", err)
	}
	v, found := pointed(doc, r.cfg.Seats.Left)
	n, err := strconv.Atoi(v)
	if !found || err != nil {
		return 0, fmt.Errorf("read the seats (seats): GET %s has no whole number at %s", path, r.cfg.Seats.Left)
	}
	return n, nil
}

// bookings reads the bookings that hold one of keys, oldest first as the
// API lists them; ok is false when the config gives no way to read them.
// answered are the booking ids the API answered to the check's keys: one
// listed under a key the check never sent says bookings.key points
// elsewhere, an error of the config's, not a booking lost by the API.
func (r *reader) bookings(ctx context.Context, keys, answered []string) (rows []engine.BookingRow, ok bool, err error) {
	switch {
	case r.cfg.Read != nil:
		for _, u := range r.cfg.Users {
			got, err := r.listed(ctx, u)
			if err != nil {
				return nil, true, err
			}
			for _, b := range got {
				switch {
				case slices.Contains(keys, b.Key):
					rows = append(rows, b)
				case slices.Contains(answered, b.ID):
					return nil, true, fmt.Errorf("read %s's bookings: GET %s lists booking %s, which the API answered to one of the check's keys, with %q at %s (bookings.key), a key the check never sent: point bookings.key at each booking's idempotency key",
						u.Name, r.cfg.Read.Path, cut(b.ID, 60), cut(b.Key, 60), r.cfg.Read.Key)
				}
			}
		}
		return rows, true, nil
	case r.db != nil && r.cfg.Database.Bookings != "":
		err := r.readOnly(ctx, func(tx pgx.Tx) error {
			res, err := tx.Query(ctx, r.cfg.Database.Bookings, keys)
			if err != nil {
				return err
			}
			defer res.Close()
			for res.Next() {
				var id, user, key, event, quantity string
				if err := res.Scan(&id, &user, &key, &event, &quantity); err != nil {
					return err
				}
				b := engine.BookingRow{ID: id, UserID: user, Key: key}
				b.EventID, _ = strconv.ParseInt(event, 10, 64)
				b.Quantity, _ = strconv.Atoi(quantity)
				rows = append(rows, b)
			}
			return res.Err()
		})
		if err != nil {
			return nil, true, fmt.Errorf("read the bookings (database.bookings, given $1, the keys sent, and returning id, user_id, idempotency_key, event_id, quantity): %w", err)
		}
		return rows, true, nil
	}
	return nil, false, nil
}

// listed is user's bookings as the API lists them (Config.Read).
func (r *reader) listed(ctx context.Context, u User) ([]engine.BookingRow, error) {
	return r.listedAt(ctx, r.cfg.URLs[0], u)
}

// listedAt is listed at the base URL base.
func (r *reader) listedAt(ctx context.Context, base string, u User) ([]engine.BookingRow, error) {
	rd := r.cfg.Read
	doc, err := r.doAt(ctx, base, http.MethodGet, rd.Path, u, "")
	if err != nil {
		return nil, fmt.Errorf("read %s's bookings (bookings): %w", u.Name, err)
	}
	list := doc
	if rd.List != "" {
		if list, err = pointedValue(doc, rd.List); err != nil {
			return nil, fmt.Errorf("read %s's bookings (bookings.list): %w", u.Name, err)
		}
	}
	items, ok := list.([]any)
	if !ok {
		return nil, fmt.Errorf("read %s's bookings: GET %s has no list at %q (bookings.list)", u.Name, rd.Path, rd.List)
	}
	var out []engine.BookingRow
	for i, it := range items {
		id, ok1 := pointed(it, rd.ID)
		key, ok2 := pointed(it, rd.Key)
		ev, ok3 := pointed(it, rd.Event)
		qty, ok4 := pointed(it, rd.Quantity)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, fmt.Errorf("read %s's bookings: item %d of GET %s lacks its id, key, event or quantity at the pointers of [bookings]", u.Name, i, rd.Path)
		}
		b := engine.BookingRow{ID: id, UserID: u.UserID(), Key: key}
		b.EventID, _ = strconv.ParseInt(ev, 10, 64)
		b.Quantity, _ = strconv.Atoi(qty)
		out = append(out, b)
	}
	return out, nil
}

// Printable is s as learn check shows what came from an API: on one
// line, with no control character (cut).
func Printable(s string) string { return cut(s, 2000) }

// cut is s on one line (its runs of white space one space, any other
// control character, an escape sequence's ESC included, shown as �), cut
// to n bytes, marked: an API's words never reach the terminal as codes.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '�'
		}
		return r
	}, s)
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
