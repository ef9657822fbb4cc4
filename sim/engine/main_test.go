package engine

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/trace"
)

// testDB is this package's PostgreSQL: a throwaway local cluster, or the
// server LEARN_TEST_DATABASE points at. Each test takes a fresh schema.
var testDB *pgtemp.Server

// TestMain runs the tests in a local time zone that is not UTC, so that a
// time shown without its conversion to UTC fails on every machine.
func TestMain(m *testing.M) {
	time.Local = time.FixedZone("UTC+9", 9*60*60)
	os.Exit(pgtemptest.Main(m, "engine", &testDB))
}

// worldConfig shapes a test world.
type worldConfig struct {
	Trace      *trace.Trace // the engine's; nil: nobody watches
	MaxConns   int          // connections of the engine's pool; default 4
	Clock      clock.Clock  // default: a clock.Fake at the current second
	Design     Design       // the engine's; zero: the lesson's
	Constraint Constraint   // the schema's; zero: UNIQUE (user_id, idempotency_key)
	Own        Transaction  // the engine's Transaction; nil: the plan of Design
}

// world is one engine on a fresh schema holding the booking tables, as an
// API instance has one (its pool made with ConfigurePool), and an admin
// pool that sets the tables up and reads them.
type world struct {
	Admin  *pgxpool.Pool
	Clock  clock.Clock
	Engine *Engine
}

// openWorld makes a world; it is removed, schema included, when tb ends.
func openWorld(tb testing.TB, cfg worldConfig) *world {
	tb.Helper()
	ctx := context.Background()
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 4
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.NewFake(time.Now().Truncate(time.Second))
	}
	sc, err := testDB.NewSchema(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := sc.Drop(context.Background()); err != nil {
			tb.Errorf("drop schema %s: %v", sc.Name(), err)
		}
	})
	pool := func(n int32, engine bool) *pgxpool.Pool {
		pcfg, err := pgxpool.ParseConfig(sc.ConnString())
		if err != nil {
			tb.Fatal(err)
		}
		pcfg.MaxConns = n
		if engine {
			ConfigurePool(pcfg)
		}
		p, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(p.Close)
		return p
	}
	w := &world{Admin: pool(2, false), Clock: cfg.Clock}
	if err := CreateSchema(ctx, w.Admin, cfg.Constraint); err != nil {
		tb.Fatal(err)
	}
	w.Engine = New(pool(int32(cfg.MaxConns), true), cfg.Clock, cfg.Trace, trace.LaneAPI(1))
	w.Engine.Design, w.Engine.Transaction = cfg.Design, cfg.Own
	return w
}

// newWorld returns a world with one event of seats seats, starting in a
// day, and the event's id.
func newWorld(t *testing.T, seats int, cfg worldConfig) (*world, int64) {
	t.Helper()
	w := openWorld(t, cfg)
	id, err := w.AddEvent(t.Context(), "Test night", seats, w.Clock.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return w, id
}

// AddEvent inserts an event and returns its id.
func (w *world) AddEvent(ctx context.Context, name string, seats int, startsAt time.Time) (int64, error) {
	var id int64
	err := w.Admin.QueryRow(ctx, `INSERT INTO events (name, seats_left, starts_at) VALUES ($1, $2, $3) RETURNING id`,
		name, seats, startsAt).Scan(&id)
	return id, err
}

// counts returns (booking rows, seats left of event) as PostgreSQL has them.
func counts(t *testing.T, w *world, eventID int64) (rows, seatsLeft int) {
	t.Helper()
	err := w.Admin.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM bookings), (SELECT seats_left FROM events WHERE id = $1)`,
		eventID).Scan(&rows, &seatsLeft)
	if err != nil {
		t.Fatal(err)
	}
	return rows, seatsLeft
}

// bothWays runs test on each executor of the booking transaction: on an
// engine nobody watches, which sends the lesson's plan pipelined (as learn
// serve and the benchmarks do), on one whose every step goes to a trace,
// which runs it step by step (as the play screen animates it), and on one
// whose transaction is the lesson written in Go (lessonInGo), plugged in
// through the seam as a learner's would be. All must answer alike.
func bothWays(t *testing.T, test func(t *testing.T, cfg worldConfig)) {
	t.Run("unwatched", func(t *testing.T) { test(t, worldConfig{}) })
	t.Run("traced", func(t *testing.T) {
		test(t, worldConfig{Trace: trace.New(clock.NewFake(time.Now()), trace.Options{})})
	})
	t.Run("own transaction", func(t *testing.T) { test(t, worldConfig{Own: lessonInGo{}}) })
}

// with returns cfg with the fields set in o.
func (cfg worldConfig) with(o worldConfig) worldConfig {
	if o.MaxConns != 0 {
		cfg.MaxConns = o.MaxConns
	}
	if o.Clock != nil {
		cfg.Clock = o.Clock
	}
	if o.Own != nil {
		cfg.Own = o.Own
	}
	if o.Design != (Design{}) {
		cfg.Design = o.Design
	}
	return cfg
}
