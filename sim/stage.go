package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dustin/go-humanize/english"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/learn-idempotency/learn/internal/pgwait"
	"github.com/learn-idempotency/learn/internal/resp"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/client"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// Schema is where one stage keeps its tables: a schema of its own in some
// PostgreSQL, a connection string whose search_path lands in it, and a way
// to drop it with everything in it. A dropped schema's Drop does nothing.
type Schema interface {
	Name() string
	ConnString() string
	Drop(ctx context.Context) error
}

// Database hands out fresh, empty schemas, one per stage.
type Database interface {
	NewSchema(ctx context.Context) (Schema, error)
}

// DatabaseOf adapts a function that makes schemas of a concrete type, such as
// (*pgtemp.Server).NewSchema, to a Database.
func DatabaseOf[S Schema](newSchema func(context.Context) (S, error)) Database {
	return databaseFunc(func(ctx context.Context) (Schema, error) {
		sc, err := newSchema(ctx)
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return sc, nil
	})
}

type databaseFunc func(context.Context) (Schema, error)

func (f databaseFunc) NewSchema(ctx context.Context) (Schema, error) { return f(ctx) }

// StageConfig shapes a Stage.
type StageConfig struct {
	Instances int              // API instances, each with its own pool; default 1
	MaxConns  int              // connections of each instance's pool, all opened by NewStage; default 4
	Clock     clock.Clock      // default: a clock.Fake at the current second
	Trace     *trace.Trace     // may be nil
	Addr      func(int) string // listen address of instance n (1 for api-1); default "127.0.0.1:0"
	// Listeners, when set, are the instances' listeners, open already:
	// instance n serves on Listeners[n-1] (Addr is not used). The stage
	// closes them with the instances, also when NewStage fails.
	Listeners []net.Listener
	// Limits bound each instance's listener and its waits for the
	// database (learn serve: WorkshopLimits). The zero value, for the
	// scenarios, has none: a held step waits as long as the learner likes.
	Limits api.ServeLimits

	// ConnWait is how long NewStage waits for a server that answers "too
	// many clients" to have the stage's connections; 0 means
	// DefaultConnWait.
	ConnWait time.Duration

	// Log, when not nil, also gets each instance's log lines (learn serve).
	// Every instance logs through Log.WithAttrs(instance=api-N): the lines
	// of all instances go through the one handler (for slog's text and JSON
	// handlers, through its one mutex), so they never interleave. Log's own
	// level applies; the trace gets every level.
	Log slog.Handler

	Design engine.Design // how each engine books; zero: correct
	// DesignName names the design when it is not the lesson's: every
	// instance's /openapi.json says so (learn serve --set).
	DesignName string
	Constraint engine.Constraint // the key constraint of the schema; zero: UNIQUE (user_id, idempotency_key)
	Keys       KeyPlace          // where instances keep keys; zero: in the booking row
	RedisTTL   time.Duration
	// DatabaseIsolation is the database's default isolation level for
	// the instances' sessions (default_transaction_isolation), a world's
	// (a DBA's) choice: learn's engine begins its transactions at its
	// design's level whatever this is; a learner's code that begins at
	// the database's level (learn exercises) runs at it. Zero: READ
	// COMMITTED.
	DatabaseIsolation engine.IsolationLevel
	// KeyExpiry, when not 0, is how long a key lives in its booking row:
	// the stage's sweeper (Stage.Sweep) removes older ones. Zero: keys
	// live as long as their bookings, the lesson's.
	KeyExpiry time.Duration
}

// KeyPlace says where API instances keep idempotency keys.
type KeyPlace string

// The places. Only KeysInRow is the lesson's design.
const (
	KeysInRow    KeyPlace = ""       // in the booking row, committed with it
	KeysInMemory KeyPlace = "memory" // in each instance's memory
	KeysInRedis  KeyPlace = "redis"  // in Redis, with a TTL
)

// DefaultRedisTTL is the TTL of keys in Redis: a payment API keeps its
// responses about 24 hours (lesson, "Follow-ups").
const DefaultRedisTTL = 24 * time.Hour

// AdminConns is how many connections a stage's admin pool holds at most:
// one for the set-up, and one to read the rows while a run goes on.
const AdminConns = 2

// Stage is the world a scenario runs in: a fresh schema holding the booking
// tables, API instances on loopback each with its own engine and pgx pool,
// and an admin pool for setup and for reading the tables. Close removes all
// of it, the schema included.
type Stage struct {
	Schema    Schema
	Admin     *pgxpool.Pool
	Clock     clock.Clock
	Trace     *trace.Trace
	Instances []*api.Instance
	// Redis is the in-process Redis server when keys are kept in Redis;
	// its keys expire by Clock, so moving a fake Clock expires them.
	Redis *resp.Server
	redis *resp.Client
	pools []*pgxpool.Pool
	// cut is set once a scenario cut an instance off its database
	// (CutDatabase): its 500s are the scenario's fault, not the design's.
	cut atomic.Bool

	keyExpiry time.Duration
	sweptMu   sync.Mutex
	swept     []engine.SweptKey // every key the sweeper removed, in the order it did
}

// NewStage creates the schema and the tables and starts the API instances.
// It opens every connection the stage holds while it builds it (one for the
// admin pool, MaxConns for each instance): a server whose max_connections
// cannot hold them with ConnSpare to spare is refused at once with a
// *ConnLimitError; a server that answers "too many clients" (SQLSTATE
// 53300) is given up to ConnWait to free them, then the error wraps
// ErrTooManyClients. On any error, ctx ending included, it returns the cause
// and removes everything made so far: listeners, pools, the in-process
// Redis and the schema.
func NewStage(ctx context.Context, db Database, cfg StageConfig) (st *Stage, err error) {
	if cfg.Instances <= 0 {
		cfg.Instances = 1
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 4
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.NewFake(time.Now().Truncate(time.Second))
	}
	if cfg.Addr == nil {
		cfg.Addr = func(int) string { return "127.0.0.1:0" }
	}
	used := 0 // of cfg.Listeners, handed to an instance (which closes it)
	defer func() {
		if err != nil {
			for _, ln := range cfg.Listeners[used:] {
				_ = ln.Close()
			}
		}
	}()
	if cfg.ConnWait <= 0 {
		cfg.ConnWait = DefaultConnWait
	}
	schema, err := db.NewSchema(ctx)
	if err != nil {
		return nil, err
	}
	st = &Stage{Schema: schema, Clock: cfg.Clock, Trace: cfg.Trace}
	// What was made so far goes on any error: the stage as built, not the
	// named result, which each "return nil, err" sets to nil.
	built := st
	defer func() {
		if err != nil {
			_ = built.Close()
		}
	}()
	acfg, err := pgxpool.ParseConfig(schema.ConnString())
	if err != nil {
		return nil, fmt.Errorf("pool config: %w", err)
	}
	acfg.MaxConns = AdminConns
	st.Admin, err = pgxpool.NewWithConfig(ctx, acfg)
	if err != nil {
		return nil, fmt.Errorf("connect to schema %s: %w", schema.Name(), err)
	}
	admin := poolNeed{st.Admin, 1, "the admin pool"}
	if err := reserve(ctx, cfg.ConnWait, admin); err != nil {
		return nil, err
	}
	settings, err := serverSettings(ctx, st.Admin)
	if err != nil {
		return nil, err
	}
	if pinSettings(acfg, settings, sessionSettings(cfg.Limits, false)) {
		// The session's defaults would change what learn does (see
		// session.go): the admin pool again, with learn's own.
		st.Admin.Close()
		if st.Admin, err = pgxpool.NewWithConfig(ctx, acfg); err != nil {
			return nil, fmt.Errorf("connect to schema %s: %w", schema.Name(), err)
		}
		admin.pool = st.Admin
		if err := reserve(ctx, cfg.ConnWait, admin); err != nil {
			return nil, err
		}
	}
	if err := checkLimit(settings, 1+cfg.Instances*cfg.MaxConns); err != nil {
		return nil, err
	}
	if err := st.createTables(ctx, cfg.Constraint); err != nil {
		return nil, err
	}
	if st.keyExpiry = cfg.KeyExpiry; st.keyExpiry > 0 {
		if err := engine.AllowKeyExpiry(ctx, st.Admin); err != nil {
			return nil, err
		}
	}
	if cfg.Keys == KeysInRedis {
		st.Redis = resp.NewServer(cfg.Clock)
		if err := st.Redis.Start(); err != nil {
			return nil, fmt.Errorf("start the in-process Redis: %w", err)
		}
		st.redis = resp.New(st.Redis.Addr())
		if cfg.RedisTTL == 0 {
			cfg.RedisTTL = DefaultRedisTTL
		}
	}
	// Every connection of the stage at once, all or nothing (see reserve).
	needs := []poolNeed{admin}
	for n := 1; n <= cfg.Instances; n++ {
		lane := trace.LaneAPI(n)
		pcfg, err := pgxpool.ParseConfig(schema.ConnString())
		if err != nil {
			return nil, fmt.Errorf("pool config: %w", err)
		}
		pcfg.MaxConns = int32(cfg.MaxConns)
		engine.ConfigurePool(pcfg)
		var tracer pgx.QueryTracer
		if cfg.Trace != nil {
			tracer = &trace.SQLTracer{Trace: cfg.Trace, Lane: lane}
		}
		cfg.Limits.LimitPool(pcfg, tracer)
		pinSettings(pcfg, settings, instanceSettings(cfg))
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return nil, fmt.Errorf("connect API instance %s: %w", lane, err)
		}
		st.pools = append(st.pools, pool)
		var h slog.Handler = &trace.LogHandler{Trace: cfg.Trace, Lane: lane}
		if cfg.Log != nil {
			h = slog.NewMultiHandler(h, cfg.Log)
		}
		a := &api.API{
			Engine: engine.New(pool, cfg.Clock, cfg.Trace, lane),
			Users:  api.DemoUsers(),
			Log:    slog.New(h).With("instance", lane),
		}
		a.Engine.Design = cfg.Design
		a.Design = cfg.DesignName
		if r, ok := db.(api.OutageReporter); ok {
			a.Outage = r.Outage
		}
		switch cfg.Keys {
		case KeysInMemory:
			a.Keys = &api.MemoryKeys{Instance: lane}
		case KeysInRedis:
			a.Keys = &api.RedisKeys{Client: st.redis, TTL: cfg.RedisTTL}
		}
		needs = append(needs, poolNeed{pool, cfg.MaxConns, "API instance " + lane})
		var inst *api.Instance
		if n <= len(cfg.Listeners) {
			inst = api.StartInstanceOn(lane, cfg.Listeners[n-1], a, cfg.Limits)
			used = n
		} else if inst, err = api.StartInstance(lane, cfg.Addr(n), a, cfg.Limits); err != nil {
			return nil, err
		}
		st.Instances = append(st.Instances, inst)
	}
	if err := reserve(ctx, cfg.ConnWait, needs...); err != nil {
		return nil, err
	}
	return st, nil
}

// KeyExpiry is how long a key lives in its booking row (StageConfig), 0
// for as long as its booking.
func (st *Stage) KeyExpiry() time.Duration { return st.keyExpiry }

// Sweep runs the key sweeper once, on the stage's clock: it removes from
// their rows the keys of the bookings made more than KeyExpiry ago
// (engine.SweepKeys), tells the trace what it removed, and returns it. A
// stage whose keys do not expire sweeps nothing.
func (st *Stage) Sweep(ctx context.Context) ([]engine.SweptKey, error) {
	if st.keyExpiry <= 0 {
		return nil, nil
	}
	before := st.Clock.Now().Add(-st.keyExpiry)
	// The SQL pane shows the sweeper's statement as the instances' are.
	if err := st.Trace.Emit(ctx, trace.Event{Kind: trace.KindSQL, From: trace.LanePostgres, To: trace.LanePostgres,
		SQL:  strings.Join(strings.Fields(engine.SweepSQL), " "),
		Text: "key sweeper: " + strings.Join(strings.Fields(engine.SweepSQL), " ") + "  [$1=" + before.UTC().Format(time.RFC3339) + "]"}); err != nil {
		return nil, err
	}
	swept, err := engine.SweepKeys(ctx, st.Admin, before)
	if err != nil {
		return nil, err
	}
	st.sweptMu.Lock()
	st.swept = append(st.swept, swept...)
	st.sweptMu.Unlock()
	what := "no key is older than that"
	if len(swept) > 0 {
		var keys []string
		for _, k := range swept {
			keys = append(keys, fmt.Sprintf("%s of %s", trace.ShortKey(uuid.MustParse(k.Key)), k.BookingID))
		}
		what = fmt.Sprintf("it removes %s from %s (the bookings stay): %s; a request with one of them is a new request now",
			english.PluralWord(len(swept), "the key", "the keys"), english.PluralWord(len(swept), "its row", "their rows"), strings.Join(keys, ", "))
	}
	err = st.Trace.Emit(ctx, trace.Event{Kind: trace.KindNote, From: trace.LanePostgres, To: trace.LanePostgres, SQL: engine.SweepSQL,
		Label: fmt.Sprintf("sweeper: %s expired", english.Plural(len(swept), "key", "")),
		Text:  fmt.Sprintf("the key sweeper runs: keys made before %s (%s ago) expire; %s", before.UTC().Format(time.RFC3339), humanDuration(st.keyExpiry), what)})
	return swept, err
}

// SweepEvery runs the sweeper (Sweep) every interval until ctx ends, as a
// server whose keys expire does (learn serve --set expiry=24h), telling
// each run's keys, or its error, to told; it returns when ctx ends, or at
// once for a stage whose keys do not expire.
func (st *Stage) SweepEvery(ctx context.Context, interval time.Duration, told func([]engine.SweptKey, error)) {
	if st.keyExpiry <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			swept, err := st.Sweep(ctx)
			if ctx.Err() != nil {
				return
			}
			told(swept, err)
		}
	}
}

// Swept is every key the sweeper removed so far, in the order it did.
func (st *Stage) Swept() []engine.SweptKey {
	st.sweptMu.Lock()
	defer st.sweptMu.Unlock()
	return slices.Clone(st.swept)
}

// createTables makes the booking tables in the stage's schema on one of
// the admin pool's connections. While another session holds it up (a lock
// on a catalog), ctx's teller (pgwait.WithTrace) is told what it waits
// for.
func (st *Stage) createTables(ctx context.Context, c engine.Constraint) error {
	conn, err := st.Admin.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("create the booking tables: %w", err)
	}
	defer conn.Release()
	stop := pgwait.Watch(ctx, conn.Conn().Config(), conn.Conn().PgConn().PID(), "creating the booking tables in schema "+st.Schema.Name())
	defer stop()
	return engine.CreateSchema(ctx, conn, c)
}

// AddEvent inserts an event with seats seats that starts at startsAt and
// returns its id.
func (st *Stage) AddEvent(ctx context.Context, name string, seats int, startsAt time.Time) (int64, error) {
	ev, err := engine.AddEvent(ctx, st.Admin, name, seats, startsAt)
	return ev.ID, err
}

// Browser returns a client for the user of token whose tries go through a
// lossy Network with plan (nil: deliver everything), over a transport of its
// own (its own connections), to the instances in round-robin order. Its
// requests have no time limit of their own: a step held for a viewer may
// wait as long as the viewer likes, and the run's context ends them.
func (st *Stage) Browser(token string, plan func(trace.Attempt) client.Fault) *client.Client {
	nw := &client.Network{Base: &http.Transport{}, Plan: plan, Trace: st.Trace}
	return &client.Client{
		Token:  token,
		User:   api.DemoUsers()[token],
		Picker: &api.RoundRobin{Instances: st.Instances},
		HTTP:   &http.Client{Transport: nw},
		Clock:  st.Clock,
		Trace:  st.Trace,
	}
}

// Lanes are the lanes of this stage, left to right: the browser, each API
// instance, Redis when keys are kept there, and PostgreSQL.
func (st *Stage) Lanes() []trace.Lane {
	lanes := []trace.Lane{{ID: trace.LaneBrowser, Name: "Browser"}}
	for n := range st.Instances {
		lanes = append(lanes, trace.Lane{ID: trace.LaneAPI(n + 1), Name: fmt.Sprintf("API-%d", n+1)})
	}
	if st.Redis != nil {
		lanes = append(lanes, trace.Lane{ID: trace.LaneRedis, Name: "Redis"})
	}
	return append(lanes, trace.Lane{ID: trace.LanePostgres, Name: "Postgres"})
}

// CutDatabase cuts API instance n (1-based) off PostgreSQL: its engine gets
// a closed pool, so every booking fails and the API answers 500. The
// returned function restores the instance's own pool.
func (st *Stage) CutDatabase(ctx context.Context, n int) (restore func(), err error) {
	eng := st.Instances[n-1].API.Engine
	dead, err := pgxpool.NewWithConfig(ctx, eng.Pool().Config())
	if err != nil {
		return nil, err
	}
	dead.Close()
	st.cut.Store(true)
	healthy := eng.SwapPool(dead)
	return func() { eng.SwapPool(healthy) }, nil
}

// Rows reads both tables (committed rows only) as one snapshot: a
// read-only REPEATABLE READ transaction, so the events and the bookings
// shown together were true together.
func (st *Stage) Rows(ctx context.Context) (engine.Rows, error) {
	var rows engine.Rows
	err := pgx.BeginTxFunc(ctx, st.Admin, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) (err error) {
			rows, err = engine.ReadRows(ctx, tx)
			return err
		})
	return rows, err
}

// Close stops the instances, closes the pools and drops the schema. It uses
// its own short deadline so that it also cleans up after a cancelled run.
func (st *Stage) Close() error {
	var errs []error
	for _, in := range st.Instances {
		errs = append(errs, in.Close())
	}
	for _, p := range st.pools {
		p.Close()
	}
	if st.redis != nil {
		errs = append(errs, st.redis.Close())
	}
	if st.Redis != nil {
		errs = append(errs, st.Redis.Close())
	}
	if st.Admin != nil {
		st.Admin.Close()
	}
	if st.Schema != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		errs = append(errs, st.Schema.Drop(ctx))
	}
	return errors.Join(errs...)
}
