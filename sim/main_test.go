package sim

import (
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/pgtemp/pgtemptest"
	"github.com/learn-idempotency/learn/sim/api"
	"github.com/learn-idempotency/learn/sim/api/apitest"
	"github.com/learn-idempotency/learn/sim/api/contracttest"
	"github.com/learn-idempotency/learn/sim/clock"
	"github.com/learn-idempotency/learn/sim/engine"
	"github.com/learn-idempotency/learn/sim/trace"
)

// testDB is this package's PostgreSQL: a throwaway local cluster, or the
// server LEARN_TEST_DATABASE points at. Each test takes a fresh schema.
var testDB *pgtemp.Server

// TestMain runs the tests in a local time zone that is not UTC, so that a
// time shown without its conversion to UTC fails on every machine.
//
// Every answer of the API that a test gets through Go's default transport
// (and the raw answers sendRaw reads) is checked against the published
// OpenAPI document (contracttest): one that does not match fails the package.
func TestMain(m *testing.M) {
	time.Local = time.FixedZone("UTC+9", 9*60*60)
	var err error
	if apiCheck, err = contracttest.InstallDefault(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := pgtemptest.Main(m, "sim", &testDB)
	report, ok := apiCheck.Report()
	fmt.Fprintln(os.Stderr, report)
	if !ok && code == 0 {
		code = 1
	}
	os.Exit(code)
}

// apiCheck checks the API's answers against openapi.json.
var apiCheck *contracttest.Validator

// newStage returns a one-instance stage on a fresh schema with one event of
// seats seats, closed when the test ends.
func newStage(t *testing.T, seats int, cfg StageConfig) (*Stage, int64) {
	t.Helper()
	ctx := t.Context()
	st, err := NewStage(ctx, testDatabase(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close stage: %v", err)
		}
	})
	id, err := st.AddEvent(ctx, "Test night", seats, st.Clock.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return st, id
}

// counts returns (booking rows, seats left of event) as PostgreSQL has them.
func counts(t *testing.T, st *Stage, eventID int64) (rows, seatsLeft int) {
	t.Helper()
	err := st.Admin.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM bookings), (SELECT seats_left FROM events WHERE id = $1)`,
		eventID).Scan(&rows, &seatsLeft)
	if err != nil {
		t.Fatal(err)
	}
	return rows, seatsLeft
}

// testDatabase hands out schemas of testDB.
func testDatabase() Database { return DatabaseOf(testDB.NewSchema) }

// engineOf is the engine of the stage's first API instance.
func engineOf(st *Stage) *engine.Engine { return st.Instances[0].API.Engine }

// bothWays runs test twice: on a stage nobody watches, whose engines send
// their plan pipelined (as learn serve and the benchmarks do), and on one
// whose every step goes to a trace, whose engines run it step by step (as
// the play screen animates it). Both must answer alike.
func bothWays(t *testing.T, test func(t *testing.T, cfg StageConfig)) {
	t.Run("unwatched", func(t *testing.T) { test(t, StageConfig{}) })
	t.Run("traced", func(t *testing.T) {
		test(t, StageConfig{Trace: trace.New(clock.NewFake(time.Now()), trace.Options{})})
	})
}

// with returns cfg with the fields set in o.
func (cfg StageConfig) with(o StageConfig) StageConfig {
	if o.MaxConns != 0 {
		cfg.MaxConns = o.MaxConns
	}
	if o.Clock != nil {
		cfg.Clock = o.Clock
	}
	return cfg
}

// post sends POST /bookings as ada with key and body, and reads the answer.
func post(t *testing.T, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	return apitest.Post(t, url, body, "Authorization", authAda, api.HeaderIdempotencyKey, key)
}
