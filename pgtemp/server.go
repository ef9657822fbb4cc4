package pgtemp

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/learn-idempotency/learn/pgtemp/internal/way"
)

// Server is a PostgreSQL that Start got ready. Its methods are safe for use by
// several goroutines. Close releases everything learn made with it.
type Server struct {
	mode       Mode
	inst       *way.Instance // what the way got ready
	describe   string
	connString string
	cfg        *pgx.ConnConfig // parsed connString, with a connect timeout
	readyIn    time.Duration

	mu      sync.Mutex // guards closed, schemas and pending; never held over a round trip
	closed  bool
	schemas map[string]*Schema
	pending map[string]bool // names whose CREATE was sent and may have been carried out

	closeOnce sync.Once
	closeErr  error
}

// newServer wraps what a way got ready for a start at t0.
func newServer(mode Mode, inst *way.Instance, t0 time.Time) *Server {
	return &Server{mode: mode, inst: inst, describe: inst.Describe, connString: inst.ConnString, cfg: inst.Config, readyIn: time.Since(t0)}
}

// Mode reports which way Start used: URL, Local, Docker or Download.
func (s *Server) Mode() Mode { return s.mode }

// Describe returns one line for people, for example
// "local PostgreSQL 15.18 (/usr/lib/postgresql/15/bin), cluster in /tmp/learn-ab12 running as postgres".
// It never contains a password.
func (s *Server) Describe() string { return s.describe }

// ConnString returns the base connection string (keyword/value or URL form)
// that pgx.ParseConfig accepts. It sets no search_path: use NewSchema for a
// connection string that lands in a schema of its own. In URL mode it is the
// caller's DatabaseURL and may hold a password, so do not print it (in
// Docker mode it holds the container's random password).
func (s *Server) ConnString() string { return s.connString }

// ReadyIn reports how long Start took, from its call until the server
// answered a query.
func (s *Server) ReadyIn() time.Duration { return s.readyIn }

// RanInitdb reports whether Start had to run initdb because no usable cluster
// template was cached (the first run for this PostgreSQL major version and
// user, or after a broken template). It is false in URL mode.
func (s *Server) RanInitdb() bool { return s.inst.RanInitdb }

// InitdbTook is how long initdb ran when Start had to run it (0 otherwise):
// what every start costs while no template can be saved.
func (s *Server) InitdbTook() time.Duration { return s.inst.InitdbTook }

// TemplateError says why Start ran initdb but could not save the cluster
// template for later starts (nil when it saved one, or copied one): the
// user cache directory is a file, read-only or full, or there is none. Its
// message names the directory and the cause; every start then runs initdb.
func (s *Server) TemplateError() error { return s.inst.TemplateErr }

// Close releases everything learn made. In URL mode it drops the schemas
// NewSchema made that were not dropped yet, and touches nothing else. In
// local and download modes it stops the cluster (fast shutdown; immediate shutdown if the
// server lingers more than 2 s; then, after 2 s more, SIGKILL to its process
// group and to each backend, so at most about 4 s for a server that hangs) and
// removes its temporary directory, so its schemas go with it and no process
// or file of learn's remains. In Docker mode it removes the container with
// its volume (the data) and checks that nothing labelled with this start
// remains. Close needs no caller context, so it works
// after the context given to Start was cancelled. It is idempotent and safe
// to call from several goroutines: every call waits for the first to finish
// and returns its error. After Close, NewSchema fails and Drop does nothing.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		var names []string
		for name := range s.schemas {
			names = append(names, name)
		}
		for name := range s.pending {
			names = append(names, name)
		}
		s.schemas, s.pending = nil, nil
		s.mu.Unlock()

		var errs []error
		if !s.inst.Disposable && len(names) > 0 {
			// Dropping the schemas one by one only matters in a database
			// that outlives learn; a local cluster goes as a whole below.
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			errs = append(errs, s.dropSchemas(ctx, names))
			cancel()
		}
		errs = append(errs, s.inst.Close())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
