// Package check is learn check: the lesson's scenarios that an HTTP
// client can run, as a test of any booking API, with learn's own client,
// retry rule and lossy proxy (sim/proxy), judged by the same invariants
// and words as every scenario (sim.Judge, sim.ReportOf).
//
// Start with [Run] (run.go): for each scenario of scenarios.go, an event
// of its own, a proxy per base URL, the scenario's browsers, then the
// facts read back and the verdict; a race is run round after round
// (scenario.rounds) since a black box cannot be forced to interleave.
//
// It holds:
//
//   - [Config] (config.go): what the check knows of the API, read from
//     TOML by [Parse] (every key checked, every needed field asked for by
//     name); [Example] is the commented config for learn serve that
//     learn check --init writes (example.toml).
//   - [Wire] (wire.go): the API's shape made from a Config, as the
//     client.Wire that learn's client speaks: the body template, each
//     user's headers, the key header, and JSON pointers into a booked
//     answer; problem details read where the API gives them.
//   - the scenarios (scenarios.go), each named after the lab scenario
//     whose verdict judges it, and [Names].
//   - the reader (read.go): what the API did, read straight from it by
//     GET or from its database by SQL (the events it adds, their seats,
//     the bookings holding the check's keys); what the config gives no
//     way to read is unseen, and the judge says "not checked".
//   - [Result], [Row] and [State] (result.go): a row per scenario (✓
//     pass, ✗ fail, ? not checked, – not run, ! error), with what the
//     judge read and said, and every request the proxy carried
//     ([Passage]).
//   - the run's browsers (clients.go): learn's client with the lesson's
//     rule, one per user or copy, and which base URL each try goes to.
//   - the passages (passages.go): each request a proxy carried as a
//     report shows it, the 5xx the API answered of its own (the judge's
//     Facts.ServerErrors), and, for a played run (Options.Trace), each
//     answer as a step held before the client gets it.
//   - pointer (pointer.go): the JSON pointers (RFC 6901) of the config.
package check
