package workshop

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
)

// The workshop's PostgreSQL killed outright (kill -9 of its postmaster):
// the room's feed, which the presenter's dashboard shows, says at once
// that the database is down and that learn is starting it again, the log
// gives the end of PostgreSQL's log, and the feed says when it is back.
func TestWorkshopSaysItsDatabaseWentAndCameBack(t *testing.T) {
	srv := pgtemptest.OwnCluster(t, pgtemp.Options{MaxConnections: MaxConnectionsFor(2)})
	var mu sync.Mutex
	var logs strings.Builder
	w, err := Start(t.Context(), Config{Addr: "127.0.0.1:0", Server: srv, Code: testCode, MaxAttendees: 2,
		HostKey: filepath.Join(t.TempDir(), "host_key"), Logf: func(format string, args ...any) {
			mu.Lock()
			fmt.Fprintf(&logs, format+"\n", args...)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	pm := srv.Health().PID
	if err := syscall.Kill(pm, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	feedHas(t, w, fmt.Sprintf("the database is down: learn's PostgreSQL (pid %d) was killed by signal 9", pm))
	feedHas(t, w, "the database is up again, on the same data")
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "PostgreSQL's log: ") {
		t.Errorf("the log does not give PostgreSQL's:\n%s", logs.String())
	}
}
