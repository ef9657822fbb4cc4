package trace

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Lanes of the sequence: the browser, one per API instance, Redis where a
// design keeps its keys there (the redis-ttl scenario), and PostgreSQL.
const (
	LaneBrowser  = "browser"
	LaneRedis    = "redis"
	LanePostgres = "postgres"
)

// Lane is one participant of the sequence: its id (LaneBrowser,
// LaneAPI(n), …) and the name a screen shows.
type Lane struct{ ID, Name string }

// LaneAPI names the lane of API instance n (1-based): "api-1", "api-2", …
func LaneAPI(n int) string { return fmt.Sprintf("api-%d", n) }

// Kind says what a trace event is. Step kinds are the moments the animation
// stops on; SQL and Log events fill the side panes and never wait.
type Kind string

// The kinds of trace events.
const (
	KindSend      Kind = "send"      // browser → API: one try of an intent leaves the browser
	KindLock      Kind = "lock"      // API → Postgres: BEGIN, then the event row locked FOR UPDATE
	KindLookup    Kind = "lookup"    // API → Postgres: the booking for (user, key) looked up; Found says if it exists
	KindWrite     Kind = "write"     // API → Postgres: seats decremented and the booking inserted, not yet committed
	KindCommit    Kind = "commit"    // API → Postgres: COMMIT
	KindRollback  Kind = "rollback"  // API → Postgres: ROLLBACK (a rejected booking, or a unique violation)
	KindAnswer    Kind = "answer"    // API → browser: the HTTP answer; Lost says the network dropped it
	KindFail      Kind = "fail"      // browser: the request never reached the API (network error before sending)
	KindWait      Kind = "wait"      // browser: backoff of Delay before the next try
	KindGiveUp    Kind = "give-up"   // browser: no tries left
	KindPause     Kind = "pause"     // a pause point of a forced interleaving inside the engine
	KindCrash     Kind = "crash"     // an API instance dies at a point of BookTicket
	KindKeyStore  Kind = "keys"      // API → its key store (process memory or Redis): a key read or written
	KindNote      Kind = "note"      // something the scenario makes happen in the world (time passes, another user books)
	KindStatement Kind = "statement" // API → Postgres: a statement of code learn did not write (learn exercises), before it is sent
	KindSQL       Kind = "sql"       // a statement as pgx sent it
	KindLog       Kind = "log"       // a line of an API instance's log
)

// IsStep reports whether events of kind k are steps of the sequence (they wait
// for the viewer in a gated trace) rather than side-pane detail.
func (k Kind) IsStep() bool { return k != KindSQL && k != KindLog }

// Event is one thing that happened in a run, as the UI animates it and the
// headless report counts it.
type Event struct {
	Seq       int           `json:"seq"`              // 1-based order of emission within the trace
	At        time.Duration `json:"at"`               // simulated time since the trace began
	Kind      Kind          `json:"kind"`             //
	From      string        `json:"from,omitempty"`   // lane the arrow leaves (LaneBrowser, LaneAPI(n), LanePostgres)
	To        string        `json:"to,omitempty"`     // lane the arrow reaches; equal to From for a note on one lane
	Intent    int           `json:"intent,omitempty"` // from the context's Attempt when left 0
	Copy      int           `json:"copy,omitempty"`
	Try       int           `json:"try,omitempty"`
	Key       string        `json:"key,omitempty"`      // the idempotency key, canonical UUID text
	EventID   int64         `json:"event_id,omitempty"` // the event the request books, on its send and engine steps
	Label     string        `json:"label"`              // a few words for the arrow
	Text      string        `json:"text"`               // caption, one line
	SQL       string        `json:"sql,omitempty"`
	Status    int           `json:"status,omitempty"`  // HTTP status of an answer
	Message   string        `json:"message,omitempty"` // the error message of an answer that is not 200
	BookingID string        `json:"booking_id,omitempty"`
	Replayed  bool          `json:"replayed,omitempty"`
	Found     bool          `json:"found,omitempty"` // lookup: a booking with this key exists
	Lost      bool          `json:"lost,omitempty"`  // answer: dropped on the way back
	Delay     time.Duration `json:"delay,omitempty"` // wait: the backoff
	Level     string        `json:"level,omitempty"` // log: DEBUG, INFO, WARN, ERROR
}

// ShortKey is the first 8 hex digits of a key, as a short git hash names a
// commit: "3f2a9c1d". The captions and the rows say keys this way; the
// caption of a request gives the whole key.
func ShortKey(k uuid.UUID) string {
	s := k.String()
	return strings.SplitN(s, "-", 2)[0]
}
