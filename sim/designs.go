package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/learn-idempotency/learn/sim/engine"
)

// What a design of the lab runs: the switches that act on nothing in it
// (NotApplying), the design that runs the same code (Effective), every
// design (AllDesigns), and how a design is put on a world (apply) or on a
// server (ServerDesign). The switches themselves are in switches.go.

// NotApplying is a switch that design s sets but that acts on nothing,
// because another switch's value leaves it nothing to decide, with why.
type NotApplying struct {
	Switch string `json:"switch"`
	Why    string `json:"why"`
}

// NotApplying lists the switches of s that act on nothing, in switch
// order: a run of s is the same whatever their values. The screens and
// --json show them so; [Switches.Effective] sets them to the lesson's.
func (s Switches) NotApplying() []NotApplying {
	var out []NotApplying
	if s.Store != KeysInRow {
		out = append(out, NotApplying{"lookup", fmt.Sprintf("store=%s: the key is looked up in the key store, before the transaction, not in the booking row", s.Get("store"))})
	}
	if s.Store == KeysInRow && s.Lookup == engine.NoLookup && s.Constraint == engine.NoUnique {
		out = append(out, NotApplying{"compare", "lookup=none and constraint=none: nothing ever finds a booking with the key, so there is nothing to compare"})
	}
	if s.Isolation == engine.ReadCommitted && s.On40001 != engine.RetryTransaction {
		// Said only when set: at the lesson's level every design has it.
		out = append(out, NotApplying{"on-40001", "isolation=read-committed: PostgreSQL raises no 40001 at READ COMMITTED"})
	}
	if s.KeyInMemory && (s.Retry == RetryNever || s.KeyPerRetry) {
		out = append(out, NotApplying{"key-kept", fmt.Sprintf("%s: no retry carries the first try's key, reload or not", map[bool]string{true: "client-key=per-retry", false: "retry=none"}[s.KeyPerRetry])})
	}
	if s.Retry == RetryNever {
		out = append(out, NotApplying{"client-key", "retry=none: the client sends one try, so no retry carries a key"})
	}
	if s.Retry == RetryNever && s.Backoff != FixedBackoff {
		out = append(out, NotApplying{"backoff", "retry=none: the client sends one try, so it never waits to retry"})
	}
	if s.Retry == RetryStatusOnly && s.InFlight == engine.WaitForLock {
		// Said only when set, as on-40001.
		out = append(out, NotApplying{"retry", "in-flight=wait: the API never answers 409 request_in_progress, the one 4xx whose code asks for a retry, so reading the status alone retries what the lesson's client does"})
	}
	return out
}

// Effective is s with every switch that does not apply ([NotApplying])
// set to the lesson's value: two designs with the same Effective run the
// same code paths.
func (s Switches) Effective() Switches {
	e := s
	for _, na := range s.NotApplying() {
		for _, d := range switches {
			if d.name == na.Switch {
				d.set(&e, d.values[0])
			}
		}
	}
	return e
}

// AllDesigns is every design of the lab, one per combination of the
// switches' values, the lesson's first (the whole-space sweep).
func AllDesigns() []Switches {
	out := []Switches{{}}
	for _, d := range switches {
		var next []Switches
		for _, s := range out {
			for _, v := range d.values {
				c := s
				d.set(&c, v)
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

// apply puts design s on a world's setup: the engine's design, the
// schema's constraint, where keys are looked up, and the browser client.
func (s Switches) apply(setup *Setup) {
	s = s.Effective()
	setup.Design = engine.Design{Lookup: s.Lookup, NoRowLock: s.NoLock, Compare: s.Compare, KeyAcrossUsers: s.Constraint == engine.UniqueKeyOnly,
		Isolation: s.Isolation, On40001: s.On40001, InFlight: s.InFlight}
	setup.Constraint = s.Constraint
	setup.Keys = s.Store
	setup.KeyExpiry = s.Expiry.Duration()
	if s.Store != KeysInRow {
		// The key is looked up in the store, before the transaction: the
		// engine does not look it up in the row. The row's constraint,
		// and the comparison of what the store or the constraint finds,
		// stay as the design has them.
		setup.Design.Lookup = engine.NoLookup
	}
	setup.NewKeyPerTry = s.KeyPerRetry
	setup.KeyInMemory = s.KeyInMemory
	setup.RetryClientErrors = s.Retry == RetryAlso4xx
	setup.RetryByStatus = s.Retry == RetryStatusOnly
	setup.BackoffJitter = s.Backoff == JitterBackoff
	setup.NoBackoff = s.Backoff == NoBackoff
	setup.NeverRetry = s.Retry == RetryNever
}

// clientSwitches are the switches that act on the browser client, not on
// the server: learn serve cannot run them (its clients are whoever calls
// it).
var clientSwitches = []string{"client-key", "key-kept", "retry", "backoff"}

// ClientSwitch reports whether the switch name acts on the browser client
// rather than on the server.
func ClientSwitch(name string) bool { return slices.Contains(clientSwitches, name) }

// ServerDesign returns s's server side for a stage (learn serve): the
// engine's design, the schema's key constraint and where keys are kept,
// as a scenario's run would set them. It fails, naming the switch, when s
// changes a switch of the browser client (client-key, key-kept, retry, backoff), which a
// server cannot run.
func (s Switches) ServerDesign(cfg *StageConfig) error {
	for _, set := range s.Changed() {
		if name, _, _ := strings.Cut(set, "="); ClientSwitch(name) {
			return fmt.Errorf("%s=%s is the browser client's switch, not the server's: learn serve runs the server side of a design (lookup, lock, constraint, compare, store, expiry, isolation, on-40001, in-flight); a client with %s=%s (%s) is yours to write against it, or try it in learn lab", name, s.Get(name), name, s.Get(name), Means(name, s.Get(name)))
		}
	}
	var setup Setup
	s.apply(&setup)
	cfg.Design, cfg.Constraint, cfg.Keys, cfg.KeyExpiry = setup.Design, setup.Constraint, setup.Keys, setup.KeyExpiry
	return nil
}
