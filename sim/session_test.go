package sim

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim/engine"
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

				req := engine.Request{UserID: "ada", EventID: ev, Quantity: 2, Key: uuid.New()}
				results := make([]engine.Result, copies)
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

// A session setting that would change what the engine does, given in the
// database URL's options (as a role's or a database's ALTER … SET would
// give it), is overridden on every connection of the stage: the lesson's
// correct design still holds in a race of copies and where the constraint
// settles two events, no try is answered 5xx, and PostgreSQL reports the engine's own values on
// the API instance's connections and the admin pool's.
func TestURLSessionSettingsDoNotChangeTheEngine(t *testing.T) {
	for _, opt := range []string{
		"-c lock_timeout=1",
		"-c statement_timeout=50",
		"-c idle_in_transaction_session_timeout=1",
		"-c default_transaction_isolation=serializable",
		"-c default_transaction_read_only=on",
		"-c exit_on_error=on",
	} {
		t.Run(opt, func(t *testing.T) {
			db := optionsDatabase{options: opt}
			for _, sc := range []struct {
				name   string
				copies int
			}{{"concurrent-copies", 10}, {"key-reuse-two-events", 0}} {
				s, err := Lookup(sc.name)
				if err != nil {
					t.Fatal(err)
				}
				run, err := s.Prepare(t.Context(), db, Options{Copies: sc.copies})
				if err != nil {
					t.Fatalf("%s: %v", sc.name, err)
				}
				name, want, _ := strings.Cut(strings.TrimPrefix(opt, "-c "), "=")
				for _, pool := range []*pgxpool.Pool{run.Stage.Admin, run.Stage.Instances[0].API.Engine.Pool()} {
					var got string
					if err := pool.QueryRow(t.Context(), "SELECT current_setting($1)", name).Scan(&got); err != nil {
						t.Fatal(err)
					}
					if got == want || got == "1ms" || got == "50ms" {
						t.Errorf("%s: the stage's connections have %s = %s, the URL's", sc.name, name, got)
					}
				}
				rep, err := run.Execute(t.Context())
				if cerr := run.Close(); cerr != nil {
					t.Errorf("close run: %v", cerr)
				}
				if err != nil {
					t.Fatalf("%s: %v", sc.name, err)
				}
				if v := s.Verdict(rep); !v.Held || slices.ContainsFunc(answerCodes(rep), func(a string) bool { return a >= "5" }) {
					t.Errorf("%s: %s; answers %v, want no 5xx", sc.name, v.Says, answerCodes(rep))
				}
			}
		})
	}
}

// optionsDatabase hands out schemas of testDB whose connection string
// carries options (PostgreSQL's -c settings for the session), as a
// --database-url with options= would.
type optionsDatabase struct{ options string }

func (d optionsDatabase) NewSchema(ctx context.Context) (Schema, error) {
	sc, err := testDB.NewSchema(ctx)
	if err != nil {
		return nil, err
	}
	return optionsSchema{sc, d.options}, nil
}

type optionsSchema struct {
	*pgtemp.Schema
	options string
}

func (s optionsSchema) ConnString() string {
	cs := s.Schema.ConnString()
	if u, err := url.Parse(cs); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("options", s.options)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return cs + " options='" + s.options + "'"
}
