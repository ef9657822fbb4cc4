// Package api is the booking engine's HTTP API: the API instances that
// learn runs on loopback, each with its own engine and pool, the front
// door that balances them, the limits every listener keeps, and the error
// catalogue every answer that is not 200 comes from.
//
// Start with [API] (api.go): POST /bookings takes the user from the
// bearer token and the key from the Idempotency-Key header (request.go
// reads both, and the strict JSON body), asks the engine, and answers 200
// [BookResponse] (the first booking, or its replay: the same bytes with
// Idempotent-Replayed: true) or problem details (an [Error] as RFC 9457's
// application/problem+json). GET /events, /events/{id} and /bookings read
// the tables; GET /openapi.json is the published contract ([OpenAPI],
// openapi.json). [API.Book] is the booking itself, through a [KeyStore] first in
// the broken designs that keep keys outside the row ([MemoryKeys],
// [RedisKeys]).
//
// It holds:
//
//   - [Instance] and [StartInstance]: an API instance on a listener;
//     [RoundRobin], how a client or the front door picks one.
//   - [FrontDoor]: the reverse proxy in front of the instances that
//     learn serve puts at --addr (a retry may land on another instance).
//   - [ServeLimits] and [Serve] (listen.go): the bounds of one listener
//     (read, write and idle times, connections, header bytes) and of a
//     request's waits for the database ([ServeLimits.LimitPool]); the
//     scenarios' zero value has none, [WorkshopLimits] are learn serve's.
//   - the error catalogue: [Error] and its codes (errors.go; the engine's
//     refusals keep the engine's codes, [engine.CodeKeyReused] and the
//     rest), each code's [ProblemType] (problems.go: status, title, what
//     is stored, the advice, Retry-After; docs/problems.md is made from
//     it), net/http's own refusals rewritten as problem details
//     (httperrors.go), the 503s of a database that cannot take the
//     request now (dbwait.go) or is known to be down ([Outage]).
//   - the wire types: [BookingJSON], [BookResponse], and the headers
//     ([HeaderIdempotencyKey], [HeaderReplayed], [HeaderRequestID],
//     [HeaderInstance]); the demo users' tokens ([TokenAda], [TokenBen]).
//   - contracttest (a package of its own, for tests): every answer held to
//     openapi.json.
//
// The API tells its steps to the engine's trace (a key store's GET and
// SET; its log lines through trace.LogHandler). Its tests over a whole
// stage, where the engine, the limits and the session settings meet, are
// in package sim.
package api
