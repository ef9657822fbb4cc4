package sim

import (
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The engine's transactions run at its own isolation level, READ
// COMMITTED, whatever the session's default is (a server, database or
// role whose default_transaction_isolation is serializable or repeatable
// read): simultaneous copies of one booking are all answered with the one
// booking, both when the statements go one by one (traced) and when they
// are pipelined. The default is set here on the engine's own connections,
// below anything NewStage does about the session's settings.
func TestEngineIsolationIgnoresTheSessionDefault(t *testing.T) {
	for _, level := range []string{"serializable", "repeatable read"} {
		t.Run(level, func(t *testing.T) {
			bothWays(t, func(t *testing.T, cfg StageConfig) {
				const copies = 20
				st, ev := newStage(t, 10, cfg.with(StageConfig{MaxConns: copies}))
				eng := engineOf(st)
				pcfg := eng.Pool().Config().Copy()
				pcfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = level
				pool, err := pgxpool.NewWithConfig(t.Context(), pcfg)
				if err != nil {
					t.Fatal(err)
				}
				defer pool.Close()
				// Every connection open before the copies start, so that
				// they meet at the row lock rather than one by one.
				var conns []*pgxpool.Conn
				for range copies {
					c, err := pool.Acquire(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					conns = append(conns, c)
				}
				for _, c := range conns {
					c.Release()
				}
				defer eng.SwapPool(eng.SwapPool(pool))
				var got string
				if err := pool.QueryRow(t.Context(), "SHOW default_transaction_isolation").Scan(&got); err != nil || got != level {
					t.Fatalf("the session's default is %q (%v), want %q: the test sets nothing", got, err, level)
				}

				req := BookingRequest{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
				results := make([]Result, copies)
				errs := make([]error, copies)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range copies {
					wg.Go(func() {
						<-start
						results[i], errs[i] = eng.BookTicket(t.Context(), req)
					})
				}
				close(start)
				wg.Wait()
				ids := map[int64]bool{}
				for i := range copies {
					if errs[i] != nil {
						t.Errorf("copy %d: %v", i, errs[i])
						continue
					}
					ids[results[i].Booking.ID] = true
				}
				if len(ids) != 1 {
					t.Errorf("the copies were answered with %d bookings, want 1", len(ids))
				}
				if rows, left := counts(t, st, ev); rows != 1 || left != 8 {
					t.Errorf("rows=%d seats_left=%d, want 1 and 8", rows, left)
				}
			})
		})
	}
}
