package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim/engine"
)

// A design reads back what it wrote, switch by switch, and refuses what
// is not a switch or not one of its values.
func TestSwitchesJSON(t *testing.T) {
	d := Switches{Lookup: engine.LookupAfterSeatCheck, Constraint: engine.NoUnique, Retry: RetryNever}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"lookup":"after-seat-check"`) || !strings.Contains(string(b), `"lock":"event-row"`) {
		t.Errorf("written %s", b)
	}
	var back Switches
	if err := json.Unmarshal(b, &back); err != nil || back != d {
		t.Errorf("read back %+v, %v; want %+v", back, err, d)
	}
	for _, bad := range []string{`{"lookup": "sideways"}`, `{"loookup": "none"}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s read without an error", bad)
		}
	}
}
