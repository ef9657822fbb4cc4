package check

import (
	"testing"

	"github.com/learn-idempotency/learn/sim/proxy"
)

// What learn's proxy does with an answer is said in its terms: an answer
// passed on, a dropped connection passed on as such (not "it", which read
// as an answer), or what a lossy fault will do.
func TestProxySays(t *testing.T) {
	for _, tc := range []struct {
		status int
		fault  proxy.Fault
		want   string
	}{
		{201, proxy.Deliver, "learn's proxy passes it on"},
		{0, proxy.Deliver, "learn's proxy passes the dropped connection on to the client"},
		{0, proxy.Crash, "learn's proxy passes the dropped connection on to the client"},
		{201, proxy.LoseAnswer, "learn's proxy will " + proxy.LoseAnswer.String()},
	} {
		if got := proxySays(tc.status, tc.fault); got != tc.want {
			t.Errorf("proxySays(%d, %v) = %q, want %q", tc.status, tc.fault, got, tc.want)
		}
	}
}
