package check

import (
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/engine"
)

// State is how a row of the check ended.
type State string

// The states.
const (
	Pass       State = "pass"        // every invariant checked and held
	Fail       State = "fail"        // an invariant failed
	NotChecked State = "not checked" // nothing failed, but what the verdict needs could not be read
	NotRun     State = "not run"     // the config cannot give the scenario its world (two base URLs, an event of its own)
	// Error: the scenario could not be run or judged: the API did not
	// answer, answered what the config does not expect, or what the check
	// reads back could not be read. A check with one fails (exit 1): in
	// CI, an API that cannot be checked is no pass.
	Error State = "error"
)

// Mark is the row's mark on a scorecard: ✓, ✗, ?, – or !.
func (s State) Mark() string {
	return map[State]string{Pass: "✓", Fail: "✗", NotChecked: "?", NotRun: "–", Error: "!"}[s]
}

// Row is one scenario of a check: what it sent, its verdict, and every
// request the proxy carried.
type Row struct {
	Name       string   `json:"name"`
	Title      string   `json:"title"`
	Sends      string   `json:"sends"`
	State      State    `json:"state"`
	Says       string   `json:"says"` // the verdict's one line, or why the scenario did not run
	Failed     []string `json:"failed_invariants"`
	NotChecked []string `json:"not_checked"`
	// Power marks the check of the checker's own power (a broken client
	// that must book twice): Pass means the check saw it do so.
	Power bool `json:"power,omitempty"`
	// Report is the run as the judge saw it: every try, the bookings
	// read back, the invariants and the verdict; nil when not run.
	Report *sim.Report `json:"-"`
	// Judged is the report's part that a black box shows: every try,
	// the bookings read back, the invariants and the verdict.
	Judged *Judged `json:"report"`
	// Round is the round of a race that Judged and Passages are of: the
	// one that failed, or the last of those that held (0: not a race).
	Round    int       `json:"round,omitempty"`
	Passages []Passage `json:"passages"`
	// answered counts the passages the API answered.
	answered int
}

// Judged is what the judge read and said of a row's run.
type Judged struct {
	Attempts    []sim.IntentReport  `json:"attempts"`
	Bookings    []engine.BookingRow `json:"bookings"`
	BookingRows int                 `json:"booking_rows"`
	SeatsTaken  int                 `json:"seats_taken"`
	Invariants  []sim.Invariant     `json:"invariants"`
	Verdict     *sim.Verdict        `json:"verdict"`
}

// Passage is one request the proxy carried, as a report shows it.
type Passage struct {
	Instance  string `json:"instance"` // the base URL's lane: api-1, api-2
	Method    string `json:"method"`
	Path      string `json:"path"`
	RequestID string `json:"request_id"` // intent.try or intent.copy.try
	Key       string `json:"key"`
	Fault     string `json:"fault"`
	Status    int    `json:"status"` // the API's answer; 0 when it gave none
	Delivered bool   `json:"delivered"`
	Answer    string `json:"answer"` // the API's answer's body, cut
	// Error is why the API gave no answer (connection refused, reset).
	Error string `json:"error,omitempty"`
	At    string `json:"at"`
}

// Result is a whole check: a row per scenario, in order.
type Result struct {
	Rows    []Row  `json:"scenarios"`
	Summary string `json:"summary"`
	Failed  int    `json:"failed"` // rows ✗ or ! (that failed, or could not be run or judged)
	Passed  int    `json:"passed"` // rows ✓: with none, the check fails as well
	Took    string `json:"took"`
	// CannotSee is what no check over HTTP can show (CannotSee).
	CannotSee string `json:"cannot_see"`
}

// CannotSee is what learn check cannot see of any API, said with every
// result: what the lab shows and an HTTP client cannot make happen.
const CannotSee = "What a check over HTTP cannot show (learn lab can): a crash between the booking and the key's write (crash-before-commit, redis-ttl), a key that expires after hours, a retry whose tries all fail (retries-exhausted), and a client's own retry rule (no-retry-on-4xx is about your client, not your API)."
