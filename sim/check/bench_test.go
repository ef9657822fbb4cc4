package check

import (
	"testing"

	"github.com/learn-idempotency/learn/sim"
)

// BenchmarkWholeCheck is a whole check of one endpoint: every scenario of
// learn check against learn's own API on two API instances, the lesson's
// design (every race run all its rounds), through the proxies, with the
// bookings and seats read back. go run ./bench -only check reports it
// against its target (under 10 s).
func BenchmarkWholeCheck(b *testing.B) {
	cfg, _ := stageFor(b, sim.Switches{})
	b.ResetTimer()
	for b.Loop() {
		res, err := Run(b.Context(), cfg, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Failed != 0 {
			b.Fatalf("%s", res.Summary)
		}
	}
}
