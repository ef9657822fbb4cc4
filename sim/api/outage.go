package api

import "net/http"

// CodeDatabaseDown is the code of the 503s an API instance answers while
// the PostgreSQL under its stage is known to be down: learn started it,
// its process exited, and learn is starting it again or could not.
const CodeDatabaseDown = "database_down"

// retryAfterRestart is the Retry-After of a 503 while learn starts its
// PostgreSQL again: a restart with recovery takes about a second.
const retryAfterRestart = "2"

// Outage is what learn knows of the PostgreSQL under a stage while its
// process is down.
type Outage struct {
	// What happened, for people: "learn's PostgreSQL (pid 4197) was killed
	// by signal 9 (killed)".
	What string
	// Back is set while learn starts it again on the same data, where
	// everything committed is kept; unset once learn could not (it is
	// gone until learn itself is started again).
	Back bool
}

// OutageReporter is a Database that knows when the server its schemas
// live in is down (pgtemp watches the servers learn starts). NewStage
// gives its Outage to every API instance: an error of the database met
// while the server is down is then answered 503 database_down with what
// happened, rather than as a passing refusal.
type OutageReporter interface {
	Outage() *Outage
}

// answer is the 503 of a request met by the outage. A booking that was
// under way may have committed before the server went: the same key
// settles it, once the server is back.
func (o *Outage) answer() *Error {
	if o.Back {
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeDatabaseDown, retryAfter: retryAfterRestart,
			Message: "The database is down: " + o.What + ". learn is starting it again on the same data, where everything stored is kept: retry in a few seconds with the same idempotency key; a booking that was stored comes back as a replay, one that was not is made then"}
	}
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeDatabaseDown,
		Message: "The database is gone: " + o.What + ". Nothing can be booked here until learn is started again"}
}
