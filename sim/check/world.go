package check

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"time"

	"github.com/dustin/go-humanize/english"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// The world a scenario needs, and what the check must have seen before
// it may judge: every row that is not ✓ or ✗ for the API's own doing is
// said here, as an error of the run or of the config, never a verdict.
//
//   - cannotRun: the config cannot give the scenario its world.
//   - sameAPI, run.sharedState, strangerAnswered: two base URLs that
//     are not two instances of one API.
//   - run.unbooked, unanswered: an API that booked nothing, a retry with
//     no answer.

// unbooked says why the run cannot be judged when the API booked none of
// its intents (every scenario has one the API must book): no answer at
// all, or only answers that the config does not read as a booking (not
// in the exercises, whose config is learn's). "" when it booked, whether
// or not the answer reached the client.
func (r *run) unbooked() string {
	w := NewWire(r.cfg)
	var last string
	for _, p := range r.carried {
		for _, a := range p.Answers {
			switch {
			case a.Err != nil:
				last = fmt.Sprintf("%s %s got no answer from the API: %v", p.Method, p.Path, a.Err)
			case w.Answer(a.Status, a.Header, a.Body).Booking != nil:
				return w.pointersOf(a.Body)
			case slices.Contains(r.cfg.Answer.Refused, a.Status):
				last = fmt.Sprintf("the API refused it with %d: %s", a.Status, cut(string(a.Body), 200))
			case slices.Contains(r.cfg.Answer.Booked, a.Status):
				last = fmt.Sprintf("the API answered %d, a booked status, with no booking id at %s (answer.booking_id): %s", a.Status, r.cfg.Answer.BookingID, cut(string(a.Body), 200))
			default:
				last = fmt.Sprintf("the API answered %d to %s %s, neither booked (answer.booked) nor refused (answer.refused): %s", a.Status, p.Method, p.Path, orNothing(cut(string(a.Body), 200), a.Header))
			}
		}
	}
	if last == "" {
		return fmt.Sprintf("not judged: no answer from the API to any try within %s (it hangs, or cannot be reached)", r.opts.Timeout)
	}
	if r.opts.Harness {
		// learn's exercises: the config is learn's, so an answer it does
		// not read as a booking is none, and the invariants judge it (a
		// 500 of the learner's API, a booking its user never got).
		return ""
	}
	return "not judged: no answer the config reads as a booking: " + last
}

// orNothing is body, or what a bodiless answer says (its Location).
func orNothing(body string, h http.Header) string {
	switch {
	case body != "":
		return body
	case h.Get("Location") != "":
		return "no body; Location: " + cut(h.Get("Location"), 200)
	}
	return "no body"
}

// notShownShared is what a retry on another instance cannot show when the
// config reads nothing through the second base URL.
const notShownShared = "the second base URL shows the state the first booking made (one API, one database)"

// sharedState says why the second base URL is not an instance of the API
// at the first, read straight from both once in's first try has booked
// there, or ""; unverified when the config gives no way to read through
// the second ([seats] or [bookings]). Two separate APIs that happen to
// number their events and bookings alike would otherwise pass: the retry
// on the second books there and answers a booking of the same id.
func (r *run) sharedState(ctx context.Context, in client.Intent) (apart string, unverified bool) {
	first, second := r.cfg.URLs[0], r.cfg.URLs[1]
	switch {
	case r.cfg.Seats != nil:
		a, err := r.rd.seatsAt(ctx, first, in.EventID)
		if err != nil {
			return "", false // the judge reads the seats again, and says
		}
		b, err := r.rd.seatsAt(ctx, second, in.EventID)
		if err != nil {
			return fmt.Sprintf("could not run: the second base URL, %s, does not show event %d after the booking on the first, %s: both urls must be instances of one API, over one database (%s)", second, in.EventID, first, cut(err.Error(), 120)), false
		}
		if a != b {
			return fmt.Sprintf("could not run: after the booking on the first base URL, event %d has %d seats left there and %d at the second, %s: both urls must be instances of one API, over one database", in.EventID, a, b, second), false
		}
	case r.cfg.Read != nil:
		rows, err := r.rd.listedAt(ctx, second, r.cfg.Users[0])
		if err != nil {
			return fmt.Sprintf("could not run: the second base URL, %s, does not list %s's bookings after the booking on the first, %s: both urls must be instances of one API, over one database (%s)", second, r.cfg.Users[0].Name, first, cut(err.Error(), 120)), false
		}
		if !slices.ContainsFunc(rows, func(b engine.BookingRow) bool { return b.Key == in.Key.String() }) {
			return fmt.Sprintf("could not run: after the booking on the first base URL, the second, %s, lists no booking with its key: both urls must be instances of one API, over one database", second), false
		}
	default:
		return "", true
	}
	return "", false
}

// sameAPI says why the second base URL is not an instance of the API at
// the first, for a scenario that retries on it, or "": it must show the
// event the first added with the same seats left (when [seats] reads
// them), or the retry's answer there would blame the API for the config.
func sameAPI(ctx context.Context, cfg *Config, rd *reader, s scenario, event int64, seats int, seesSeats bool) string {
	if s.instances < 2 {
		return ""
	}
	if a, b := addrsOf(ctx, cfg.URLs[0]), addrsOf(ctx, cfg.URLs[1]); len(a) > 0 && slices.ContainsFunc(a, func(x string) bool { return slices.Contains(b, x) }) {
		return fmt.Sprintf("could not run: %s and %s reach one address, so one API instance: give two instances of one API", cfg.URLs[0], cfg.URLs[1])
	}
	if cfg.Seats == nil || !seesSeats {
		return ""
	}
	n, err := rd.seatsAt(ctx, cfg.URLs[1], event)
	switch {
	case err != nil:
		return fmt.Sprintf("could not run: the second base URL, %s, does not show event %d, which the first shows: both urls must be instances of one API, over one database (%s)", cfg.URLs[1], event, cut(err.Error(), 120))
	case n != seats:
		return fmt.Sprintf("could not run: the second base URL, %s, shows event %d with %d seats left, the first with %d: both urls must be instances of one API, over one database", cfg.URLs[1], event, n, seats)
	}
	return ""
}

// addrsOf is the addresses (ip:port) that base URL u reaches, its host
// looked up; none when the look-up fails.
func addrsOf(ctx context.Context, u string) []string {
	p, err := url.Parse(u)
	if err != nil {
		return nil
	}
	hp := hostPort(p)
	host, port, _ := net.SplitHostPort(hp)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return nil
	}
	var out []string
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil {
			if a == netip.IPv6Loopback() {
				ip = "127.0.0.1" // localhost is 127.0.0.1 and ::1, which a server on either may answer
			}
			out = append(out, net.JoinHostPort(ip, port))
		}
	}
	return out
}

// strangerAnswered says why a scenario that retries on the second base
// URL cannot be judged when that URL answered neither booked nor refused
// (a 404 for an event it does not know), or "": another instance of the
// API books or refuses, as the first does.
func strangerAnswered(cfg *Config, s scenario, passages []Passage) string {
	if s.instances < 2 {
		return ""
	}
	for _, p := range passages {
		if p.Instance != trace.LaneAPI(2) || p.Status == 0 || slices.Contains(cfg.Answer.Booked, p.Status) || slices.Contains(cfg.Answer.Refused, p.Status) {
			continue
		}
		return fmt.Sprintf("not judged: the second base URL, %s, answered the retry %d, neither booked nor refused: both urls must be instances of one API, over one database (it said: %s)", cfg.URLs[1], p.Status, cut(p.Answer, 160))
	}
	return ""
}

// unanswered says why a run cannot be judged when an intent's last try
// got no answer, or "": every scenario of the check ends each intent on
// an answer, so a retry that got none (the base URL refused the
// connection, or the API hung up) shows nothing of what it would have
// answered, and no verdict may claim it.
func unanswered(cfg *Config, outcomes []client.Outcome, passages []Passage) string {
	for _, o := range outcomes {
		if len(o.Tries) == 0 {
			continue
		}
		last := o.Tries[len(o.Tries)-1]
		if last.Error == "" {
			continue
		}
		at := trace.Attempt{Intent: o.Intent.Number, Copy: o.Intent.Copy, Try: last.Try}
		why := last.Error
		url := ""
		for i, p := range passages {
			if p.RequestID == api.RequestID(at) {
				url = cfg.URLs[min(laneIndex(p.Instance), len(cfg.URLs)-1)]
				if passages[i].Error != "" {
					why = passages[i].Error
				}
			}
		}
		return fmt.Sprintf("not judged: the last try of intent %d (try %d, to %s %s) got no answer: %s; the check cannot see what the API answers its retry", o.Intent.Number, last.Try, last.Instance, url, cut(why, 200))
	}
	return ""
}

// laneIndex is the index in the config's urls of lane api-N.
func laneIndex(lane string) int {
	var n int
	if _, err := fmt.Sscanf(lane, "api-%d", &n); err != nil || n < 1 {
		return 0
	}
	return n - 1
}

// cannotRun says why the config cannot give s its world, or "".
func cannotRun(cfg *Config, s scenario) string {
	switch {
	case s.instances > len(cfg.URLs):
		return "not run: it needs two API instances of the same API: two base URLs in urls (or a second BOOKING-URL)"
	case s.ownEvent && cfg.Event.Create == nil:
		return fmt.Sprintf("not run: it needs an event of its own with exactly %s: give [event.create], how the API adds an event", english.Plural(s.seats, "seat", ""))
	}
	return ""
}
