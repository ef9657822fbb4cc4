// Package client is the browser side of a booking: the intent and its
// idempotency key, the retry rule, and the lossy network between the
// browser and the API instances.
//
// Start with [Client.Book] (client.go): it sends POST /bookings with the
// intent's key, the same on every try, and retries by [ShouldRetry]
// (lesson, "How it works": a network error or a 5xx, never a 4xx but for
// the one whose code asks for a retry, 409 request_in_progress, at most 3
// tries after [DefaultBackoff]'s 1 s and 2 s, waited on the run's clock). [NewIntent] makes one key per intent, [Intent.WithQuantity] a
// new intent when the quantity changes; [Outcome] is every try of an
// intent and what came back ([TryResult], [Answer]).
//
// [Network] (network.go) is a real http.RoundTripper that applies a
// [Fault] to each try: deliver, lose the answer after the API acted,
// fail before sending, or send it twice at once; it tells every answer,
// delivered or lost, to the trace. The broken clients of the lab are
// switches of [Client]: a new key per try, the key kept in memory only,
// another retry rule ([RetryClientErrors], [RetryByStatus]).
//
// A [Wire] (wire.go) is the shape of one API: how a try is written as a
// request and how an answer is read. [LearnWire], learn's own, is the
// zero Client's and Network's; learn check gives another API's. The
// client picks instances through a [Picker] (api.RoundRobin); the
// scenarios (package sim) build clients for their users (Stage.Browser).
package client
