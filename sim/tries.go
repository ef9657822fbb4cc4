package sim

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dustin/go-humanize/english"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/trace"
)

// What the judge reads of the tries themselves, where the run could see
// them (learn check's proxy): the API's own 5xx answers, and the waits of
// a learner's client before its retries.

// serverErrors says how many tries the API answered with a 5xx of its
// own, and the first of them: "2 tries answered a 5xx by the API itself,
// the first #1.2.1: “500 …”".
func serverErrors(errs map[TryRef]string) string {
	if len(errs) == 0 {
		return "no try answered a 5xx by the API itself"
	}
	refs := slices.SortedFunc(maps.Keys(errs), func(a, b TryRef) int {
		return cmp.Or(cmp.Compare(a.Intent, b.Intent), cmp.Compare(a.Copy, b.Copy), cmp.Compare(a.Try, b.Try))
	})
	at := api.RequestID(trace.Attempt{Intent: refs[0].Intent, Copy: refs[0].Copy, Try: refs[0].Try})
	return fmt.Sprintf("%s a 5xx by the API itself, the first #%s: “%s”", english.Plural(len(refs), "try answered", "tries answered"), at, errs[refs[0]])
}

// clientWaits are the waits of learn's client before each retry of
// outcomes, from when its tries left on its own clock (TryResult.SentAt).
func clientWaits(outcomes []client.Outcome) map[TryRef]time.Duration {
	w := map[TryRef]time.Duration{}
	for _, o := range outcomes {
		for i, t := range o.Tries {
			if i > 0 {
				w[TryRef{o.Intent.Number, o.Intent.Copy, t.Try}] = t.SentAt - o.Tries[i-1].SentAt
			}
		}
	}
	return w
}

// hurried are the retries of f.Waits sent before their backoff was up
// (try n waits f.Backoff[n-2]), in order.
func hurried(f Facts) []TryRef {
	var refs []TryRef
	for ref, w := range f.Waits {
		if ref.Try >= 2 && ref.Try-2 < len(f.Backoff) && w < f.Backoff[ref.Try-2] {
			refs = append(refs, ref)
		}
	}
	slices.SortFunc(refs, func(a, b TryRef) int {
		return cmp.Or(cmp.Compare(a.Intent, b.Intent), cmp.Compare(a.Copy, b.Copy), cmp.Compare(a.Try, b.Try))
	})
	return refs
}

// hurriedSay says the first retry sent before its backoff was up: "try
// #1.2 sent 2ms after #1.1, where the client waits 100ms first".
func hurriedSay(f Facts) string {
	refs := hurried(f)
	if len(refs) == 0 {
		return "every retry waited its backoff"
	}
	ref := refs[0]
	at := func(try int) string {
		return "#" + api.RequestID(trace.Attempt{Intent: ref.Intent, Copy: ref.Copy, Try: try})
	}
	return fmt.Sprintf("%s: try %s sent %s after %s, where the client waits %s first",
		english.Plural(len(refs), "retry", "retries")+" sent early", at(ref.Try), f.Waits[ref].Round(time.Millisecond), at(ref.Try-1), f.Backoff[ref.Try-2])
}
