package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/clock"
)

// stageConfig is the example config pointed at a stage of learn's own
// API with design d, on two API instances.
func stageFor(t testing.TB, d sim.Switches) (*Config, *sim.Stage) {
	t.Helper()
	cfg := sim.StageConfig{Instances: 2, MaxConns: 2*sim.DefaultCopies + 2, Clock: clock.Real{}}
	if err := d.ServerDesign(&cfg); err != nil {
		t.Fatal(err)
	}
	st, err := sim.NewStage(t.Context(), sim.DatabaseOf(testDB.NewSchema), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := Parse([]byte(strings.Replace(Example, `urls = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]`,
		fmt.Sprintf("urls = [%q, %q]", st.Instances[0].URL, st.Instances[1].URL), 1)))
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

// Against learn's own API under the lesson's design, with the example
// config, every scenario passes, the check's own power included, and each
// row holds the requests the proxy carried.
func TestTheLessonsDesignPassesEveryScenario(t *testing.T) {
	cfg, _ := stageFor(t, sim.Switches{})
	res, err := Run(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != len(Names()) || res.Failed != 0 {
		t.Errorf("%s", res.Summary)
	}
	for _, row := range res.Rows {
		if row.State != Pass {
			t.Errorf("%s: %s %s; failed %v, not checked %v", row.Name, row.State, row.Says, row.Failed, row.NotChecked)
		}
		if len(row.Passages) == 0 || row.Report == nil {
			t.Errorf("%s: %d passages, report %v", row.Name, len(row.Passages), row.Report)
		}
	}
	lost := res.Rows[0]
	if lost.Name != "lost-answer" || len(lost.Passages) != 2 || lost.Passages[0].Delivered || lost.Passages[0].Status != 200 || !lost.Passages[1].Delivered ||
		lost.Report.BookingRows != 1 || lost.Report.SeatsTaken != 2 {
		t.Errorf("lost answer: passages %+v, %d rows, %d seats", lost.Passages, lost.Report.BookingRows, lost.Report.SeatsTaken)
	}
	if want := "one booking, 2 seats, and the retry got the same booking back"; lost.Says != want {
		t.Errorf("lost answer says %q, want %q", lost.Says, want)
	}
}

// With no way to read the bookings or the seats, nothing is ✓: every row
// that ran is "not checked", and says what it could not read.
func TestWhatTheCheckCannotSeeIsNotChecked(t *testing.T) {
	cfg, _ := stageFor(t, sim.Switches{})
	cfg.Read, cfg.Seats = nil, nil
	res, err := Run(t.Context(), cfg, Options{Only: []string{"lost-answer", "two-users-same-key", "new-key-per-retry"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		if row.State != NotChecked || !slices.Contains(row.NotChecked, sim.InvOneBookingPerIntent) || !strings.Contains(row.Says, "could not be read") {
			t.Errorf("%s: %s %q, not checked %v", row.Name, row.State, row.Says, row.NotChecked)
		}
	}
}

// The scenarios only learn's exercise harness can run are not learn
// check's: not listed, not run, and refused by name, unless the API is
// the harness.
func TestHarnessScenariosAreTheExercisesOnly(t *testing.T) {
	if slices.Contains(Names(), "crash-before-commit") || !slices.Contains(HarnessNames(), "crash-before-commit") {
		t.Fatalf("Names %v, HarnessNames %v", Names(), HarnessNames())
	}
	cfg, err := Parse([]byte(Example))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), cfg, Options{Only: []string{"crash-before-commit"}})
	if err == nil || !strings.Contains(err.Error(), `no scenario "crash-before-commit"`) {
		t.Errorf("Run: %v", err)
	}
}
