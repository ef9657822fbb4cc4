package check

import (
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
)

// The config's SQL runs in a read-only transaction with a statement
// timeout: a query that writes is refused by PostgreSQL, the row says
// so, and the table is as it was.
func TestTheConfigsSQLCannotWrite(t *testing.T) {
	cfg, st := stageFor(t, sim.Switches{})
	cfg.Seats = nil
	cfg.Database = &Database{Seats: "UPDATE events SET seats_left = 0 WHERE id = $1 RETURNING seats_left"}
	res, err := Run(t.Context(), cfg, Options{Only: []string{"lost-answer"}, DatabaseURL: st.Schema.ConnString()})
	if err != nil {
		t.Fatal(err)
	}
	row := res.Rows[0]
	if row.State != Error || !strings.Contains(row.Says, "read-only transaction") {
		t.Errorf("%s %q; want an error from the read-only transaction", row.State, row.Says)
	}
	var zero int
	if err := st.Admin.QueryRow(t.Context(), `SELECT count(*) FROM events WHERE seats_left = 0`).Scan(&zero); err != nil || zero != 0 {
		t.Errorf("%d events with no seats left (%v): the UPDATE wrote", zero, err)
	}
}

// A pointer into the booked answer that is given and names nothing (or a
// value of the wrong kind) is an error that names it, never a ✓ that has
// checked nothing.
func TestAWrongAnswerPointerIsNamed(t *testing.T) {
	cfg, _ := stageFor(t, sim.Switches{})
	cfg.Answer.User, cfg.Answer.Quantity = "/booking/userr", "/booking/idempotency_key"
	res, err := Run(t.Context(), cfg, Options{Only: []string{"lost-answer"}})
	if err != nil {
		t.Fatal(err)
	}
	row := res.Rows[0]
	if row.State != Error || !strings.Contains(row.Says, "answer.user /booking/userr and answer.quantity /booking/idempotency_key name no value") {
		t.Errorf("%s %q", row.State, row.Says)
	}
}

// What an API says reaches the terminal as text, on one line: no escape
// sequence, no control character.
func TestAnAPIsWordsAreNoCodes(t *testing.T) {
	got := cut("oops\x1b[2J\x1b[31mred\x1b]0;pwned\x07\n\tend\u009b", 200)
	if strings.ContainsAny(got, "\x1b\x07\n\t\u009b") || got != "oops�[2J�[31mred�]0;pwned� end�" {
		t.Errorf("%q", got)
	}
}
