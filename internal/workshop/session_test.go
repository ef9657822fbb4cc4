package workshop

import (
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
)

// play takes its arguments as the local command does (--variant broken,
// --variant=broken) and as the word alone; anything else is refused with
// the forms it takes.
func TestPlayTakesTheLocalCommandsForms(t *testing.T) {
	broken := common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: string(sim.Broken)}}
	for _, tc := range []struct {
		cmd  string
		want common.Open
	}{
		{"play", common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: string(sim.Correct)}}},
		{"play lost-answer", common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: string(sim.Correct)}}},
		{"play lost-answer broken", broken},
		{"play lost-answer --variant broken", broken},
		{"play lost-answer --variant=broken", broken},
		{"play --variant broken lost-answer", broken},
		{"play --variant correct", common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer", Variant: string(sim.Correct)}}},
	} {
		got, err := firstPage(strings.Fields(tc.cmd))
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.cmd, got, err, tc.want)
		}
	}
	for _, cmd := range []string{
		"play lost-answer --variant",
		"play lost-answer --variant wobbly",
		"play lost-answer --colour red",
		"play no-such-scenario",
		"play lost-answer broken extra",
	} {
		_, err := firstPage(strings.Fields(cmd))
		if err == nil || !strings.HasPrefix(err.Error(), "learn workshop: ") || !strings.HasSuffix(err.Error(), "use "+playUsage) {
			t.Errorf("%q: %v; want an error that gives the forms play takes", cmd, err)
		}
	}
}
