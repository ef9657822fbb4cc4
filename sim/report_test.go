package sim

import "testing"

// The invariants' details say their counts in words, singular for one and
// plural otherwise: "1 intent booked more than once", "0 intents …",
// "2 (user, key) pairs …".
func TestInvariantDetailsSayTheCountsInWords(t *testing.T) {
	tests := []struct {
		scenario string
		variant  Variant
		want     map[string]string // invariant name → detail
	}{
		{"lost-answer", Correct, map[string]string{
			InvOnePerKey:           "0 (user, key) pairs with more than one booking",
			InvOneBookingPerIntent: "0 intents booked more than once",
			InvAnswerMatches:       "0 answers carry a booking of another event or quantity",
			InvKeysPerUser:         "0 intents got 409 for a key only another user had used",
		}},
		{"lost-answer", Broken, map[string]string{
			InvOnePerKey:           "1 (user, key) pair with more than one booking",
			InvOneBookingPerIntent: "1 intent booked more than once",
			InvIntentGetsItsBook:   "1 intent booked but finally answered with something else",
			InvRefusalFinal:        "0 intents sent again after a 4xx",
		}},
		{"redis-ttl", Broken, map[string]string{
			InvOnePerKey:           "2 (user, key) pairs with more than one booking",
			InvOneBookingPerIntent: "2 intents booked more than once",
			InvIntentGetsItsBook:   "2 intents booked but finally answered with something else",
		}},
		{"different-quantity", Broken, map[string]string{
			InvAnswerMatches: "1 answer carries a booking of another event or quantity",
		}},
		{"two-users-same-key", Broken, map[string]string{
			InvKeysPerUser: "1 intent got 409 for a key only another user had used",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+string(tt.variant), func(t *testing.T) {
			got := map[string]string{}
			for _, inv := range runScenario(t, tt.scenario, Options{Variant: tt.variant}).Invariants {
				got[inv.Name] = inv.Detail
			}
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("%s: detail %q, want %q", name, got[name], want)
				}
			}
		})
	}
}
