package trace

import "context"

type attemptKey struct{}

// Attempt identifies one try of one intent: Intent n (1-based, in the order a
// scenario made them), Copy c when the intent was sent as several
// simultaneous copies (1-based; 0 otherwise), Try t (1 for the first send,
// 2 and 3 for retries) and the lane of the API instance it was sent to.
type Attempt struct {
	Intent, Copy, Try int
	Instance          string
}

// WithAttempt returns ctx carrying a, so that the network, the API and the
// engine tag their trace events with it.
func WithAttempt(ctx context.Context, a Attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// AttemptFrom returns the Attempt in ctx, or the zero Attempt.
func AttemptFrom(ctx context.Context) Attempt {
	a, _ := ctx.Value(attemptKey{}).(Attempt)
	return a
}
