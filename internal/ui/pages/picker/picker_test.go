package picker

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/sim"
)

// A row offers "broken" only for a scenario that has a broken design;
// the others say "correct only" (or just "[correct]" where room is short),
// at every size. Before, all 14 rows read "[correct] broken".
func TestRowsOfferBrokenOnlyWhereItExists(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 30}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			c := &common.Common{Styles: common.NewStyles(true), Keys: common.NewKeyMap(), Width: size[0], Height: size[1]}
			m := New(c)
			without := 0
			for i, s := range sim.Scenarios() {
				var b bytes.Buffer
				delegate{m}.Render(&b, m.list, i, item{s})
				row := ansi.Strip(b.String())
				if !strings.Contains(row, "[correct]") {
					t.Errorf("%s: no chosen design in %q", s.Name, row)
				}
				if !s.HasBroken() {
					without++
					if strings.Contains(row, "broken") {
						t.Errorf("%s has no broken design; its row offers one: %q", s.Name, row)
					}
				}
				if size[0] < 80 {
					continue // room for the chosen design only
				}
				want := "[correct] broken"
				if !s.HasBroken() {
					want = "[correct] only"
				}
				if !strings.Contains(row, want) {
					t.Errorf("%s: row %q, want %q", s.Name, row, want)
				}
			}
			if without == 0 {
				t.Fatal("no scenario without a broken design: the check checks nothing")
			}
		})
	}
}
