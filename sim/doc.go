// Package sim is the scenario layer of learn's booking world: the
// scenarios the lesson plays, the stage each runs on, and the one judge
// of what a run showed. It builds on the layers below it, each a package
// of its own: the engine (sim/engine: schema, the booking transaction,
// its designs), the HTTP API (sim/api: instances, front door, limits,
// error catalogue), the browser side (sim/client: intents, keys, the
// retry rule, the lossy network), and what they all tell and read
// (sim/trace, sim/clock).
//
// Start with [Scenarios] and [Lookup] (scenarios.go: the catalogue, in
// the lesson's order, each a world run under its correct design and,
// where it has one, a broken one), then [Scenario.Prepare] and
// [Run.Execute] (scenario.go), which play, demo, the lab, check and the
// workshop all run.
//
// It holds:
//
//   - [Stage] (stage.go): the world of one run, a fresh schema, API
//     instances on loopback each with its own engine and pool, an admin
//     pool, and Redis where a design keeps keys there; [NewStage] opens
//     every connection it will hold while it is built (conns.go) and pins
//     the session settings the engine relies on (session.go). [Database]
//     and [Schema] are how a stage gets its PostgreSQL (package pgtemp).
//   - the judge (invariants.go): [Facts] of a finished run, read by
//     queries of the tables and from the tries, and [Judge], which checks
//     every [Invariant] on them.
//   - [Verdict] (verdict.go, verdicts.go, verdictcounts.go): what a run means in the user's
//     terms, with the [Diagnosis] of the "Break it" table; [Report]
//     (report.go): a run's headless result, learn demo --json.
//   - the design lab: [Switches] (switches.go), each a real code path of
//     the engine, the schema or the client; [Score] and [Scorecard]
//     (lab.go), every scenario under one design.
//
// Nothing here imports Bubble Tea: the screens (internal/ui) read a run's
// trace, rows and report.
package sim
