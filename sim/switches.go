package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/sim/engine"
)

// Switches is a design of the booking endpoint, as the design lab composes
// it: each switch a real code path of the engine, the schema or the
// browser client. The zero value is the lesson's design. Every scenario is
// a world (events, seats, instances, faults) run under one design: its
// correct variant, its broken variant, or a learner's.
type Switches struct {
	// Lookup is where the engine looks the key up.
	Lookup engine.LookupPlace
	// NoLock reads the event without SELECT … FOR UPDATE.
	NoLock bool
	// Constraint is the key's uniqueness rule in the schema; with
	// UniqueKeyOnly the engine also looks keys up whoever booked them.
	Constraint engine.Constraint
	// Compare is what is compared between the booking found with the key
	// and the request.
	Compare engine.CompareRule
	// Store is where the key is looked up: in the booking row (the
	// lesson's), or in a key store before the transaction, in which case
	// the Lookup switch does not apply; the row's constraint and the
	// comparison still do.
	Store KeyPlace
	// KeyPerRetry makes the client send a new key on every try.
	KeyPerRetry bool
	// KeyInMemory keeps the client's key in the page's memory only: a
	// reload of the page loses it.
	KeyInMemory bool
	// Retry is the client's retry rule.
	Retry RetryRule
	// Isolation is the booking transaction's isolation level.
	Isolation engine.IsolationLevel
	// On40001 is what the engine does with a serialization failure.
	On40001 engine.SerializationRule
	// InFlight is what a request meets while another with its key is
	// still being booked.
	InFlight engine.InFlightRule
	// Expiry is how long a key lives in its booking row.
	Expiry KeyExpiry
	// Backoff is how long the client waits before each retry.
	Backoff BackoffRule
}

// BackoffRule is how long the browser waits before a retry.
type BackoffRule string

// The rules. Only FixedBackoff is the lesson's.
const (
	FixedBackoff  BackoffRule = ""       // 1 s, then 2 s (client.DefaultBackoff)
	JitterBackoff BackoffRule = "jitter" // each wait and a random part up to as much again (Client.Jitter)
	NoBackoff     BackoffRule = "none"   // no wait at all
)

// KeyExpiry is how long a key lives in its booking row before a sweeper
// removes it.
type KeyExpiry string

// The expiries. Only NeverExpire is the lesson's.
const (
	NeverExpire KeyExpiry = ""    // as long as the booking
	Expire24h   KeyExpiry = "24h" // a day, as a payment API keeps its responses
)

// Duration is e as a duration, 0 for NeverExpire.
func (e KeyExpiry) Duration() time.Duration {
	if e == Expire24h {
		return 24 * time.Hour
	}
	return 0
}

// RetryRule is which answers the browser client retries.
type RetryRule string

// The rules. Only RetryNetwork5xx is the lesson's.
const (
	RetryNetwork5xx RetryRule = ""            // network errors, 5xx and 409 request_in_progress, at most 3 tries (ShouldRetry)
	RetryStatusOnly RetryRule = "status-only" // network errors and 5xx, every 4xx final (RetryByStatus)
	RetryAlso4xx    RetryRule = "also-4xx"    // 4xx answers too (RetryClientErrors)
	RetryNever      RetryRule = "none"        // one try only
)

// switchDef is one switch of the lab: its name, its values (the lesson's
// first), what each value means, and how it reads and sets a design.
type switchDef struct {
	name, explain string
	values        []string
	means         map[string]string
	get           func(Switches) string
	set           func(*Switches, string)
}

// switches are the lab's switches, in the order of a booking's path.
var switches = []switchDef{
	{
		name: "lookup", explain: "where the transaction looks the idempotency key up",
		values: []string{"after-lock", "before-lock", "after-seat-check", "none"},
		means: map[string]string{
			"after-lock":       "right after locking the event row, before anything else (the lesson's)",
			"before-lock":      "before locking the event row: two copies can both miss the key",
			"after-seat-check": "only after the seat check: a retry of the last seats is refused",
			"none":             "never before inserting: every request inserts, and only a unique violation makes it read the booking",
		},
		get: func(s Switches) string {
			return map[engine.LookupPlace]string{engine.LookupAfterLock: "after-lock", engine.LookupBeforeLock: "before-lock", engine.LookupAfterSeatCheck: "after-seat-check", engine.NoLookup: "none"}[s.Lookup]
		},
		set: func(s *Switches, v string) {
			s.Lookup = map[string]engine.LookupPlace{"after-lock": engine.LookupAfterLock, "before-lock": engine.LookupBeforeLock, "after-seat-check": engine.LookupAfterSeatCheck, "none": engine.NoLookup}[v]
		},
	},
	{
		name: "lock", explain: "whether the event row is locked (SELECT … FOR UPDATE)",
		values: []string{"event-row", "none"},
		means: map[string]string{
			"event-row": "copies of one request queue on the event row (the lesson's)",
			"none":      "no lock: copies of one request run side by side",
		},
		get: func(s Switches) string { return map[bool]string{false: "event-row", true: "none"}[s.NoLock] },
		set: func(s *Switches, v string) { s.NoLock = v == "none" },
	},
	{
		name: "constraint", explain: "the bookings table's unique constraint on the key",
		values: []string{"user-key", "key", "none"},
		means: map[string]string{
			"user-key": "UNIQUE (user_id, idempotency_key): keys are per user (the lesson's)",
			"key":      "UNIQUE (idempotency_key): keys shared by every user, looked up by key alone",
			"none":     "no unique constraint: nothing stops a second row with the key",
		},
		get: func(s Switches) string {
			return map[engine.Constraint]string{engine.UniquePerUser: "user-key", engine.UniqueKeyOnly: "key", engine.NoUnique: "none"}[s.Constraint]
		},
		set: func(s *Switches, v string) {
			s.Constraint = map[string]engine.Constraint{"user-key": engine.UniquePerUser, "key": engine.UniqueKeyOnly, "none": engine.NoUnique}[v]
		},
	},
	{
		name: "compare", explain: "what is compared when the key already has a booking",
		values: []string{"user-event-quantity", "event-quantity", "none"},
		means: map[string]string{
			"user-event-quantity": "the booking's user, event and quantity against the request's: the same is a replay, different is 409 (the lesson's; its lookup is by user, so the user always matches)",
			"event-quantity":      "event and quantity only: where keys are looked up by key alone, another user's booking is replayed to this one",
			"none":                "nothing: replay whatever booking holds the key",
		},
		get: func(s Switches) string {
			return map[engine.CompareRule]string{engine.CompareAll: "user-event-quantity", engine.CompareEventQuantity: "event-quantity", engine.NoCompare: "none"}[s.Compare]
		},
		set: func(s *Switches, v string) {
			s.Compare = map[string]engine.CompareRule{"user-event-quantity": engine.CompareAll, "event-quantity": engine.CompareEventQuantity, "none": engine.NoCompare}[v]
		},
	},
	{
		name: "store", explain: "where the key is looked up",
		values: []string{"row", "memory", "redis-ttl"},
		means: map[string]string{
			"row":       "in the booking row, committed with it (the lesson's)",
			"memory":    "in each API instance's memory, before the transaction, and written there after COMMIT: another instance has never seen it; the row's constraint still applies",
			"redis-ttl": "in Redis, before the transaction, and written there after COMMIT with a 24 h TTL: no transaction spans the two writes, and a retry after the TTL finds nothing (an expiry is a sound contract when documented and longer than every retry a client sends, as Stripe's 24 h is; the redis-ttl scenario's retry comes 25 h later, and its crash between the writes needs the row); the row's constraint still applies",
		},
		get: func(s Switches) string {
			return map[KeyPlace]string{KeysInRow: "row", KeysInMemory: "memory", KeysInRedis: "redis-ttl"}[s.Store]
		},
		set: func(s *Switches, v string) {
			s.Store = map[string]KeyPlace{"row": KeysInRow, "memory": KeysInMemory, "redis-ttl": KeysInRedis}[v]
		},
	},
	{
		name: "expiry", explain: "how long the key lives in its booking row",
		values: []string{"never", "24h"},
		means: map[string]string{
			"never": "as long as the booking: a retry however late finds it (the lesson's)",
			"24h":   "a sweeper clears keys from their rows after a day (the bookings stay): a retry after that books again",
		},
		get: func(s Switches) string { return map[KeyExpiry]string{NeverExpire: "never", Expire24h: "24h"}[s.Expiry] },
		set: func(s *Switches, v string) {
			s.Expiry = map[string]KeyExpiry{"never": NeverExpire, "24h": Expire24h}[v]
		},
	},
	{
		name: "isolation", explain: "the isolation level the transaction begins at",
		values: []string{"read-committed", "repeatable-read", "serializable"},
		means: map[string]string{
			"read-committed":  "each statement sees what was committed before it: a copy that waited for the row lock reads the row as the copy before it left it, and finds its booking (the lesson's)",
			"repeatable-read": "the transaction sees the database as it was at its first statement: a copy that waited for the row lock of a row changed since fails with 40001, serialization failure",
			"serializable":    "as repeatable-read, and PostgreSQL also fails one of two transactions that could not have run one after the other even where they change no common row (one key sent for two events at once) with 40001",
		},
		get: func(s Switches) string {
			return map[engine.IsolationLevel]string{engine.ReadCommitted: "read-committed", engine.RepeatableRead: "repeatable-read", engine.Serializable: "serializable"}[s.Isolation]
		},
		set: func(s *Switches, v string) {
			s.Isolation = map[string]engine.IsolationLevel{"read-committed": engine.ReadCommitted, "repeatable-read": engine.RepeatableRead, "serializable": engine.Serializable}[v]
		},
	},
	{
		name: "on-40001", explain: "what the engine does with a 40001, serialization failure",
		values: []string{"retry-transaction", "answer-503", "answer-500"},
		means: map[string]string{
			"retry-transaction": fmt.Sprintf("roll back and run the whole transaction again, in a new snapshot, up to %d runs in all, as PostgreSQL's manual asks (the lesson's)", engine.MaxTxTries),
			"answer-503":        "roll back and answer 503 serialization_failure with Retry-After: nothing stored, the client's retry with the same key gets the booking",
			"answer-500":        "take the 40001 for an error like any other: 500 internal, which says the server failed rather than \"try again\" (many clients and proxies do not retry it, and it pages whoever is on call)",
		},
		get: func(s Switches) string {
			return map[engine.SerializationRule]string{engine.RetryTransaction: "retry-transaction", engine.Answer503: "answer-503", engine.Answer500: "answer-500"}[s.On40001]
		},
		set: func(s *Switches, v string) {
			s.On40001 = map[string]engine.SerializationRule{"retry-transaction": engine.RetryTransaction, "answer-503": engine.Answer503, "answer-500": engine.Answer500}[v]
		},
	},
	{
		name: "in-flight", explain: "what a request meets while another with its key is still being booked",
		values: []string{"wait", "answer-409"},
		means: map[string]string{
			"wait":       "it queues for the event's row lock behind the first (503 event_busy past the bound), then replays the booking (the lesson's)",
			"answer-409": "a lock on the key itself first (pg_try_advisory_xact_lock): a copy that finds it taken gets 409 request_in_progress at once, and retries",
		},
		get: func(s Switches) string {
			return map[engine.InFlightRule]string{engine.WaitForLock: "wait", engine.Answer409: "answer-409"}[s.InFlight]
		},
		set: func(s *Switches, v string) {
			s.InFlight = map[string]engine.InFlightRule{"wait": engine.WaitForLock, "answer-409": engine.Answer409}[v]
		},
	},
	{
		name: "client-key", explain: "when the browser makes a key",
		values: []string{"per-intent", "per-retry"},
		means: map[string]string{
			"per-intent": "one key per booking intent, sent again on every retry (the lesson's)",
			"per-retry":  "a new key for every try",
		},
		get: func(s Switches) string { return map[bool]string{false: "per-intent", true: "per-retry"}[s.KeyPerRetry] },
		set: func(s *Switches, v string) { s.KeyPerRetry = v == "per-retry" },
	},
	{
		name: "key-kept", explain: "where the page keeps the intent's key",
		values: []string{"storage", "memory"},
		means: map[string]string{
			"storage": "saved with the form's state (sessionStorage) before the request is sent: a reload of the page finds it (the lesson's)",
			"memory":  "in the page's memory only: a reload loses it, and the page drawn again makes a new key",
		},
		get: func(s Switches) string { return map[bool]string{false: "storage", true: "memory"}[s.KeyInMemory] },
		set: func(s *Switches, v string) { s.KeyInMemory = v == "memory" },
	},
	{
		name: "retry", explain: "which answers the browser retries",
		values: []string{"network-5xx", "status-only", "also-4xx", "none"},
		means: map[string]string{
			"network-5xx": "network errors, 5xx and 409 request_in_progress (by its code), at most 3 tries after 1 s and 2 s (the lesson's)",
			"status-only": "network errors and 5xx by the status alone: a 409 request_in_progress is taken as a final refusal",
			"also-4xx":    "4xx answers too, which are final",
			"none":        "never: one try",
		},
		get: func(s Switches) string {
			return map[RetryRule]string{RetryNetwork5xx: "network-5xx", RetryStatusOnly: "status-only", RetryAlso4xx: "also-4xx", RetryNever: "none"}[s.Retry]
		},
		set: func(s *Switches, v string) {
			s.Retry = map[string]RetryRule{"network-5xx": RetryNetwork5xx, "status-only": RetryStatusOnly, "also-4xx": RetryAlso4xx, "none": RetryNever}[v]
		},
	},
	{
		name: "backoff", explain: "how long the browser waits before a retry",
		values: []string{"fixed", "jitter", "none"},
		means: map[string]string{
			"fixed":  "1 s before the second try, 2 s before the third: clients that failed together retry together (the lesson's)",
			"jitter": "each wait and a random part up to as much again (1–2 s, then 2–4 s): clients that failed together retry apart",
			"none":   "no wait: the retry goes at once, a retry storm against an API that is already struggling",
		},
		get: func(s Switches) string {
			return map[BackoffRule]string{FixedBackoff: "fixed", JitterBackoff: "jitter", NoBackoff: "none"}[s.Backoff]
		},
		set: func(s *Switches, v string) {
			s.Backoff = map[string]BackoffRule{"fixed": FixedBackoff, "jitter": JitterBackoff, "none": NoBackoff}[v]
		},
	},
}

// Switch describes one switch of the lab for people and screens.
type Switch struct {
	Name    string   // e.g. "lookup"
	Explain string   // what it decides, one line
	Values  []string // its values, the lesson's first
}

// LabSwitches lists the lab's switches in the order of a booking's path.
func LabSwitches() []Switch {
	out := make([]Switch, len(switches))
	for i, d := range switches {
		out[i] = Switch{Name: d.name, Explain: d.explain, Values: slices.Clone(d.values)}
	}
	return out
}

// Means says what value v of switch name does, in one line ("" for an
// unknown one).
func Means(name, v string) string {
	for _, d := range switches {
		if d.name == name {
			return d.means[v]
		}
	}
	return ""
}

// Get is the value of switch name in s.
func (s Switches) Get(name string) string {
	for _, d := range switches {
		if d.name == name {
			return d.get(s)
		}
	}
	return ""
}

// With is s with switch name set to value v. It fails, listing what is
// valid, for an unknown switch or value.
func (s Switches) With(name, v string) (Switches, error) {
	var names []string
	for _, d := range switches {
		names = append(names, d.name)
		if d.name != name {
			continue
		}
		if !slices.Contains(d.values, v) {
			return s, fmt.Errorf("switch %s has no value %q: use one of %s", name, v, strings.Join(d.values, ", "))
		}
		d.set(&s, v)
		return s, nil
	}
	return s, fmt.Errorf("no switch %q: the switches are %s", name, strings.Join(names, ", "))
}

// ParseSwitches reads "name=value" settings onto the lesson's design. A
// switch set twice is an error: which of the two was meant cannot be told.
func ParseSwitches(settings []string) (Switches, error) {
	var s Switches
	given := map[string]string{}
	for _, set := range settings {
		name, v, ok := strings.Cut(set, "=")
		if !ok {
			return s, fmt.Errorf("%q is not name=value, e.g. lookup=after-seat-check", set)
		}
		name, v = strings.TrimSpace(name), strings.TrimSpace(v)
		if first, twice := given[name]; twice {
			return s, fmt.Errorf("switch %s is set twice (%s=%s, then %s=%s): set each switch once", name, name, first, name, v)
		}
		given[name] = v
		var err error
		if s, err = s.With(name, v); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Changed lists "name=value" for every switch that differs from the
// lesson's design, in switch order.
func (s Switches) Changed() []string {
	var out []string
	for _, d := range switches {
		if v := d.get(s); v != d.values[0] {
			out = append(out, d.name+"="+v)
		}
	}
	return out
}

// String is the changed switches, or "the lesson's design".
func (s Switches) String() string {
	if c := s.Changed(); len(c) > 0 {
		return strings.Join(c, " ")
	}
	return "the lesson's design"
}

// MarshalJSON writes every switch by name: {"lookup": "after-lock", …}.
func (s Switches) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString("{")
	for i, d := range switches {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %q", d.name, d.get(s))
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

// UnmarshalJSON reads a design written by MarshalJSON; a switch left out
// keeps the lesson's value, an unknown switch or value is an error.
func (s *Switches) UnmarshalJSON(b []byte) error {
	var byName map[string]string
	if err := json.Unmarshal(b, &byName); err != nil {
		return err
	}
	d := Switches{}
	for _, sw := range switches {
		v, ok := byName[sw.name]
		if !ok {
			continue
		}
		var err error
		if d, err = d.With(sw.name, v); err != nil {
			return err
		}
		delete(byName, sw.name)
	}
	for name := range byName {
		_, err := d.With(name, "")
		return err
	}
	*s = d
	return nil
}
