// Package check is learn check's side of the booking world: the lesson's
// scenarios run as a test of any HTTP booking API, with learn's own
// client, retry rule and lossy proxy, judged by the same invariants as
// every scenario (design.md, "learn check: how it is built").
//
// It holds so far:
//
//   - [Config] (config.go): what the check knows of the API, read from
//     TOML by [Parse] (every key checked, every needed field asked for by
//     name); [Example] is the commented config for learn serve that
//     learn check --init writes (example.toml).
//   - [Wire] (wire.go): the API's shape made from a Config, as the
//     client.Wire that learn's client and lossy network speak: the body
//     template, each user's headers, the key header, and JSON pointers
//     into a booked answer; problem details read where the API gives
//     them.
//
// The scenarios' runner through sim/proxy, the facts it reads back
// (Config.Read) and the verdicts come next (issue 23).
package check
