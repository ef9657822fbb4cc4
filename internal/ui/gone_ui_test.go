package ui

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
	"github.com/learn-idempotency/learn/progress"
)

// Once learn's PostgreSQL is gone for good (it kept exiting, and learn no
// longer starts it again), a run that failed says so and what to do,
// instead of "r tries again", which could no longer work.
func TestAFailedRunOverAGoneServerSaysWhatToDo(t *testing.T) {
	srv := pgtemptest.OwnCluster(t, pgtemp.Options{})
	own := func(c *common.Common) {
		c.DB = live.Existing(srv)
		c.Runs = live.NewRuns(t.Context(), c.DB)
	}
	u := startUIWith(t, common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, 80, 24, filepath.Join(t.TempDir(), "p.json"), own)
	u.waitFor(t, "step 1 ·")
	// Kill the postmaster each time learn has it up again, until learn
	// gives up on it.
	for srv.Health().State != pgtemp.Gone {
		changed := srv.HealthChanged()
		if h := srv.Health(); h.State == pgtemp.Up {
			if err := syscall.Kill(h.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-changed:
		case <-time.After(30 * time.Second): // a guard against a hang, not a bound
			t.Fatalf("no news of the server: %+v", srv.Health())
		}
	}
	u.press("r")
	u.waitFor(t, "The run could not go on", "learn's PostgreSQL is gone and could not be started again: q quits")
}
