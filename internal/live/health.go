package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
	"github.com/learn-idempotency/learn/sim/api"
)

// The health of the PostgreSQL learn started (pgtemp.Health): runs wait
// while it is started again, say what happened when it went under them,
// and the API's answers say so too (Database). learn serve and the
// workshop tell the news as it comes (WatchHealth, News).

// Database is srv's schemas as the database of runs and stages: it also
// reports srv's outages (sim.OutageReporter), so that an API instance
// answers, while the server is down, that it is.
func Database(srv *pgtemp.Server) sim.Database { return serverDB{srv} }

type serverDB struct{ srv *pgtemp.Server }

func (d serverDB) NewSchema(ctx context.Context) (sim.Schema, error) {
	sc, err := d.srv.NewSchema(ctx)
	if err != nil {
		return nil, err // never a typed nil inside the interface
	}
	return sc, nil
}

func (d serverDB) Outage() *api.Outage { return OutageOf(d.srv.Health()) }

// OutageOf is the outage h describes, nil while the server is up.
func OutageOf(h pgtemp.Health) *api.Outage {
	switch h.State {
	case pgtemp.Restarting:
		return &api.Outage{What: h.Exit, Back: true}
	case pgtemp.Gone:
		return &api.Outage{What: h.Summary()}
	}
	return nil
}

// WatchHealth calls tell with each change of srv's Health after the call,
// until ctx ends or srv is Gone (which it tells too). It returns at once
// for a server learn does not watch (a database named by URL).
func WatchHealth(ctx context.Context, srv *pgtemp.Server, tell func(pgtemp.Health)) {
	ch := srv.HealthChanged()
	if ch == nil {
		return
	}
	last := srv.Health()
	for {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
		ch = srv.HealthChanged()
		h := srv.Health()
		if h.State == last.State && h.Restarts == last.Restarts {
			continue
		}
		last = h
		tell(h)
		if h.State == pgtemp.Gone {
			return
		}
	}
}

// News is what to tell people of h: one sentence, and the lines of the
// end of the server's log when it has exited (nil once it is up again).
func News(h pgtemp.Health) (line string, log []string) {
	if h.Log != "" && h.State != pgtemp.Up {
		log = strings.Split(h.Log, "\n")
	}
	switch h.State {
	case pgtemp.Restarting:
		return "the database is down: " + h.Exit + "; learn is starting it again on the same data, where every booking stored is kept", log
	case pgtemp.Gone:
		return "the database is gone: " + h.Summary(), log
	}
	return fmt.Sprintf("the database is up again, on the same data: every booking stored before is there (learn has started it again %d time%s)",
		h.Restarts, plural(h.Restarts)), nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Health is where the server stands: Up until it is ready, and for a
// database learn does not watch.
func (p *Postgres) Health() pgtemp.Health {
	if srv := p.Server(); srv != nil {
		return srv.Health()
	}
	return pgtemp.Health{State: pgtemp.Up}
}

// settle bounds how long a run that failed on a lost connection waits for
// the watcher to say whether the server went: it notices a postmaster's
// exit within milliseconds.
const settle = time.Second

// explain is err as a run tells it while the server is down: what happened
// and what to do, with err. A failure that looks like the server going
// (a connection refused or lost) waits up to settle for the watcher's word.
func (p *Postgres) explain(ctx context.Context, err error) error {
	srv := p.Server()
	if srv == nil || err == nil {
		return err
	}
	ch, h := srv.HealthChanged(), srv.Health()
	if h.State == pgtemp.Up && ch != nil && serverLost(err) {
		t := time.NewTimer(settle)
		defer t.Stop()
		select {
		case <-ch:
			h = srv.Health()
		case <-t.C:
		case <-ctx.Done():
		}
	}
	if h.State == pgtemp.Up {
		return err
	}
	return &downError{h: h, err: err}
}

// downError is the error of a run the server went under.
type downError struct {
	h   pgtemp.Health
	err error
}

func (e *downError) Error() string {
	if e.h.State == pgtemp.Restarting {
		return fmt.Sprintf("the database went down under the run: %s. learn is starting it again on the same data: try the run again in a moment (%v)", e.h.Exit, e.err)
	}
	return fmt.Sprintf("the database is gone: %s. Reading and the quizzes still work; to run scenarios again, quit learn and start it again (%v)", e.h.Summary(), e.err)
}

func (e *downError) Unwrap() error { return e.err }

// serverLost reports whether err looks like the server going away: a
// connection refused, or one that ended under the run.
func serverLost(err error) bool {
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return strings.HasPrefix(pgErr.Code, "57P")
	}
	for _, target := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE, syscall.ECONNREFUSED, pgconn.ErrConnClosed} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
