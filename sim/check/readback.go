package check

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/dustin/go-humanize/english"

	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/proxy"
)

// readBack books one plain booking for each of the first two users (1
// seat, then 2), each sent once straight to the first base URL, and says
// how the config reads them back otherwise than they were sent and
// answered, or "". Nothing in it is a fault of idempotency: a pointer at
// another field, a user's id that is not the API's, an SQL query that
// returns the id in another form, would each turn every scenario's
// verdict into a blame of the API, so the check stops before them. ""
// also when the API did not book (the scenarios then say what it
// answered) or the read back failed (they say so too).
func readBack(ctx context.Context, cfg *Config, rd *reader, opts Options) string {
	event := cfg.Event.ID
	if cfg.Event.Create != nil {
		var err error
		if event, err = rd.addEvent(ctx, 10); err != nil {
			return ""
		}
	}
	before, seesSeats, err := rd.seatsLeft(ctx, event)
	if err != nil {
		return ""
	}
	w := NewWire(cfg)
	hc := &http.Client{Timeout: opts.Timeout}
	if opts.Trace != nil {
		// A played run waits an hour for a try (the learner steps it),
		// but these bookings are not held: they are answered at once or
		// not at all.
		hc.Timeout = min(opts.Timeout, readBackWithin)
	}
	type sent struct {
		user User
		in   client.Intent
		id   string
	}
	var all []sent
	var keys, ids []string
	for i, u := range cfg.Users[:2] {
		in := client.NewIntent(i+1, event, i+1)
		req, err := w.Request(ctx, cfg.URLs[0], u.Name, in)
		if err != nil {
			return ""
		}
		resp, err := hc.Do(req)
		if err != nil {
			return ""
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, proxy.MaxAnswer))
		resp.Body.Close()
		if err != nil {
			return ""
		}
		b := w.Answer(resp.StatusCode, resp.Header, body).Booking
		if b == nil || w.pointersOf(body) != "" {
			return "" // the scenarios say what came back
		}
		said := func(what string, args ...any) string {
			return fmt.Sprintf("a plain booking of %s for %s, sent once, was answered with booking %s: %s", english.Plural(in.Quantity, "seat", ""), u.Name, b.ID, fmt.Sprintf(what, args...))
		}
		switch {
		case cfg.Answer.User != "" && b.UserID != u.UserID():
			return said("its user at answer.user (%s) is %q, and %s's id is %q: give each user's id as the API shows it (users.id), or fix answer.user", cfg.Answer.User, cut(b.UserID, 60), u.Name, u.UserID())
		case cfg.Answer.Event != "" && b.EventID != event:
			return said("its event at answer.event (%s) is %d, and it was sent for event %d: fix answer.event", cfg.Answer.Event, b.EventID, event)
		case cfg.Answer.Quantity != "" && b.Quantity != in.Quantity:
			return said("its quantity at answer.quantity (%s) is %d, and it asked for %d: fix answer.quantity", cfg.Answer.Quantity, b.Quantity, in.Quantity)
		}
		all = append(all, sent{u, in, b.ID})
		keys, ids = append(keys, in.Key.String()), append(ids, b.ID)
	}
	rows, seesRows, err := rd.bookings(ctx, keys, ids)
	if err != nil {
		return ""
	}
	if seesRows {
		for _, s := range all {
			i := slices.IndexFunc(rows, func(b engine.BookingRow) bool { return b.Key == s.in.Key.String() })
			said := func(what string, args ...any) string {
				return fmt.Sprintf("a plain booking of %s for %s, sent once and answered with booking %s, reads back %s (fix the config, or the API if it stores it so)", english.Plural(s.in.Quantity, "seat", ""), s.user.Name, s.id, fmt.Sprintf(what, args...))
			}
			if opts.Harness {
				// learn's exercises: the config is learn's, the code the
				// learner's.
				mine := fmt.Sprintf("a plain booking of %s for %s, sent once and answered with booking %s, ", english.Plural(s.in.Quantity, "seat", ""), s.user.Name, s.id)
				if i < 0 {
					return mine + "is not in the bookings table: your BookTicket answered a booking it did not commit (is tx.Commit called, and its error returned?)"
				}
				if b := rows[i]; b.ID != s.id || b.UserID != s.user.UserID() || b.EventID != event || b.Quantity != s.in.Quantity {
					return mine + fmt.Sprintf("is stored as booking %s of %s, %s for event %d: your BookTicket answered another booking than it stored", cut(b.ID, 20), cut(b.UserID, 20), english.Plural(b.Quantity, "seat", ""), b.EventID)
				}
				continue
			}
			if i < 0 {
				return said("with no booking that holds its key %s: do [bookings] (database.bookings) read every booking of the user, with its idempotency key?", s.in.Key)
			}
			b := rows[i]
			switch {
			case b.ID != s.id:
				return said("as booking %q: answer.booking_id and bookings.id (database.bookings' id) must read the same id, in the same form", cut(b.ID, 60))
			case b.UserID != s.user.UserID():
				return said("with user %q, and %s's id is %q: give each user's id as the API stores it (users.id)", cut(b.UserID, 60), s.user.Name, s.user.UserID())
			case b.EventID != event:
				return said("with event %d, and it was sent for event %d: fix bookings.event (database.bookings' event_id)", b.EventID, event)
			case b.Quantity != s.in.Quantity:
				return said("with quantity %d, and it asked for %d: fix bookings.quantity (database.bookings' quantity)", b.Quantity, s.in.Quantity)
			}
		}
	}
	if seesSeats {
		after, _, err := rd.seatsLeft(ctx, event)
		if err == nil && before-after != 3 {
			return fmt.Sprintf("event %d had %s left before two plain bookings of 1 and 2 seats, and %d after: do [seats] (database.seats) read the event's seats left?", event, english.Plural(before, "seat", ""), after)
		}
	}
	return ""
}

// readBackWithin bounds the read back's bookings in a played run.
const readBackWithin = 10 * time.Second

// seatsNeeded is how many seats of a shared event (event.id) the
// scenarios todo take from an API that books each intent once, the read
// back's 3 included: a broken API takes more.
func seatsNeeded(todo []scenario) int {
	n := 3
	for _, s := range todo {
		if !s.ownEvent {
			n += s.takes * max(s.rounds, 1)
		}
	}
	return n
}
