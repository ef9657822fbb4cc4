package serve

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/engine"
)

// everyInterface reports whether addr listens on every network interface
// (no host, 0.0.0.0 or ::).
func everyInterface(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// otherPort suggests the port after addr's, e.g. 127.0.0.1:8081 for
// 127.0.0.1:8080.
func otherPort(addr string, taken ...string) string {
	host, port, err := net.SplitHostPort(addr)
	var p int
	if err != nil || host == "" {
		host = "127.0.0.1"
	}
	if _, err := fmt.Sscan(port, &p); err != nil || p <= 0 || p >= 65535 {
		p = 8080
	}
	next := net.JoinHostPort(host, fmt.Sprint(p+1))
	for q := p + 1; q < min(p+100, 65536); q++ {
		a := net.JoinHostPort(host, fmt.Sprint(q))
		if slices.ContainsFunc(taken, func(t string) bool { return samePort(t, q) }) {
			continue
		}
		if ln, err := net.Listen("tcp", a); err == nil {
			ln.Close()
			return a
		}
	}
	return next
}

// samePort reports whether the address addr has port q.
func samePort(addr string, q int) bool {
	_, port, err := net.SplitHostPort(addr)
	return err == nil && port == fmt.Sprint(q)
}

// intro is what learn serve prints once it is ready.
type intro struct {
	design      string // "" for the lesson's
	broken      bool   // a design other than the lesson's
	asLessons   bool   // whose switches that apply are all the lesson's (Switches.Effective)
	notApplying []sim.NotApplying
	db          string
	front       string
	instances   []*api.Instance
	eventID     int64
	seats       int
	startsAt    time.Time
	tables      string // the connection string of the run's schema; "" when not learn's to print
	keyExpiry   time.Duration
}

// printIntro prints where everything listens and the commands to paste.
// The line "learn serve: ready" comes last.
func printIntro(w io.Writer, in intro) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("learn serve: PostgreSQL: %s", in.db)
	if in.tables != "" {
		p("learn serve: its tables: %s (for learn check --database-url)", in.tables)
	}
	p("learn serve: listening on %s (round-robin over %d API instance%s)", in.front, len(in.instances), map[bool]string{true: "", false: "s"}[len(in.instances) == 1])
	for _, inst := range in.instances {
		p("learn serve: %s on %s", inst.Name, inst.URL)
	}
	switch {
	case in.broken && in.asLessons:
		p("learn serve: design: %s, which runs as the lesson's:", in.design)
		for _, na := range in.notApplying {
			p("learn serve: %s acts on nothing here: %s", na.Switch, na.Why)
		}
	case in.broken:
		p("learn serve: design: %s, NOT the lesson's: a practice target (learn lab --set … says which scenarios it fails, if any)", in.design)
		for _, na := range in.notApplying {
			p("learn serve: %s acts on nothing here: %s", na.Switch, na.Why)
		}
	default:
		p("learn serve: design: the lesson's")
	}
	if in.keyExpiry > 0 {
		p("learn serve: keys expire: every %s the key sweeper removes from their booking rows the keys older than %s (the bookings stay; a retry after that books again)", shortDuration(SweepInterval), shortDuration(in.keyExpiry))
	}
	p("learn serve: event %d %q, %d seats, starts %s", in.eventID, EventName, in.seats, in.startsAt.UTC().Format(time.RFC3339))
	p("")
	p("Demo users (the API takes the user from the token, never from the body):")
	users := api.DemoUsers()
	tokens := make([]string, 0, len(users))
	for tok := range users {
		tokens = append(tokens, tok)
	}
	slices.Sort(tokens)
	for _, tok := range tokens {
		p("  %-5s Authorization: Bearer %s", users[tok], tok)
	}
	ada := "Authorization: Bearer " + api.TokenAda
	book := func(base string, qty int) string {
		return fmt.Sprintf(`curl -si %s/bookings -H "%s" -H "%s: $KEY" -d '{"event_id": %d, "quantity": %d}'`,
			base, ada, api.HeaderIdempotencyKey, in.eventID, qty)
	}
	p("")
	p("Try it from another terminal. One key per booking intent:")
	p("  KEY=$(uuidgen 2>/dev/null || cat /proc/sys/kernel/random/uuid)")
	p("")
	// The lesson's design answers as these lines say; another design is
	// there to be found out, so its lines say what to look for.
	again, changed, other := fmt.Sprintf("Run it again: same booking, replayed (the same 200, and the header %s: true):", api.HeaderReplayed),
		fmt.Sprintf("The same key with quantity 3 (409 %s):", engine.CodeKeyReused),
		"A retry that lands on another API instance gets the same booking:"
	if in.broken && !in.asLessons {
		again = fmt.Sprintf("Run it again: the lesson's design replays it (the same 200, %s: true); does this one?", api.HeaderReplayed)
		changed = fmt.Sprintf("The same key with quantity 3: the lesson's design refuses it (409 %s); does this one?", engine.CodeKeyReused)
		other = "A retry on another API instance: the lesson's design gives the same booking; does this one? (GET /bookings shows every row)"
	}
	p("Book 2 seats (200 and the booking):")
	p("  %s", book(in.front, 2))
	p("%s", again)
	p("  %s", book(in.front, 2))
	p("%s", changed)
	p("  %s", book(in.front, 3))
	if len(in.instances) > 1 {
		p("%s", other)
		for _, inst := range in.instances[:2] {
			p("  %s", book(inst.URL, 2))
		}
	} else {
		p("Or straight at the API instance, as a retry that skips the front door:")
		p("  %s", book(in.instances[0].URL, 2))
	}
	p("The events and ada's bookings:")
	p("  curl -s %s/events", in.front)
	p(`  curl -s %s/bookings -H "%s"`, in.front, ada)
	p("")
	p("The %s header of each answer names the API instance that handled it.", api.HeaderInstance)
	p("Refusals are problem details (%s); every code: %s", api.ContentTypeProblem, strings.TrimSuffix(api.ProblemBase, "#"))
	p("The log goes to stderr; to see only the replays: learn serve 2>&1 | grep replayed")
	p("learn serve: ready; Ctrl-C stops it and removes the database")
}

// shortDuration is d without its zero minutes and seconds: "24h", "1m".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
