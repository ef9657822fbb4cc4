package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/sim"
)

// Postgres is the throwaway PostgreSQL of one learn process (or of one
// workshop), started in the background so that reading works at once while
// it gets ready. Close stops it and removes what it made, whether it has
// finished starting, is still starting, or failed. Its methods are safe for
// concurrent use.
type Postgres struct {
	cancel  context.CancelFunc
	done    chan struct{}
	started time.Time
	owned   bool // Close stops the server

	budget atomic.Pointer[Budget] // shared among learners (a workshop); nil: none

	mu       sync.Mutex
	progress string                   // the newest progress line of the start
	download *pgtemp.DownloadProgress // a download under way, nil otherwise
	srv      *pgtemp.Server
	err      error
	took     time.Duration
	shown    string // what Describe says instead of the server's own line; "" for that line
}

// Launch starts getting a PostgreSQL the way opts says (pgtemp.Start) in the
// background and returns at once.
func Launch(opts pgtemp.Options) *Postgres { return LaunchAfter(opts, nil) }

// LaunchAfter is Launch, but the start waits until after is closed (nil:
// at once): the app lets its first frame reach the screen before the
// template copy and the server's start take the machine's cores. Close
// before that gives up the start; the time it took counts from the call.
func LaunchAfter(opts pgtemp.Options, after <-chan struct{}) *Postgres {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Postgres{cancel: cancel, done: make(chan struct{}), started: time.Now(), owned: true, progress: "looking for PostgreSQL"}
	opts.Logf = p.logf
	opts.OnDownload = p.onDownload
	go func() {
		defer close(p.done)
		defer func() {
			if r := recover(); r != nil {
				p.mu.Lock()
				p.err = fmt.Errorf("starting PostgreSQL panicked: %v", r)
				p.mu.Unlock()
			}
		}()
		if after != nil {
			select {
			case <-after:
			case <-ctx.Done():
				p.mu.Lock()
				p.err = ctx.Err()
				p.mu.Unlock()
				return
			}
		}
		srv, err := pgtemp.Start(ctx, opts)
		p.mu.Lock()
		p.srv, p.err, p.took = srv, err, time.Since(p.started)
		p.mu.Unlock()
	}()
	return p
}

// logf takes a progress line of the start; a download's bytes are all in
// once the next line comes.
func (p *Postgres) logf(format string, args ...any) {
	p.mu.Lock()
	p.progress = fmt.Sprintf(format, args...)
	p.download = nil
	p.mu.Unlock()
}

// onDownload takes the progress of a download.
func (p *Postgres) onDownload(d pgtemp.DownloadProgress) {
	p.mu.Lock()
	p.download = &d
	p.mu.Unlock()
}

// Pending is a start that has not begun and never will: it says it is
// looking for PostgreSQL. The first frame, drawn before anything starts,
// shows it.
// Close ends it at once: a pending start is given up.
func Pending() *Postgres {
	p := &Postgres{done: make(chan struct{}), progress: "looking for PostgreSQL"}
	var once sync.Once
	p.cancel = func() {
		once.Do(func() {
			p.mu.Lock()
			p.err = errStopped
			p.mu.Unlock()
			close(p.done)
		})
	}
	return p
}

// Existing wraps a server that is running already and belongs to the
// caller (the workshop's, or a test package's): it is ready at once, and
// Close leaves it running.
func Existing(srv *pgtemp.Server) *Postgres {
	p := &Postgres{cancel: func() {}, done: make(chan struct{}), started: time.Now(), srv: srv, progress: "ready"}
	close(p.done)
	return p
}

// SetBudget shares the server's connections among the runs made on it from
// now on: each run takes its connections from b before it builds its stage
// and waits, saying why, when they are not free (see Budget). Without a
// budget runs take connections as they come, and a full server makes them
// wait a bounded time (sim.NewStage).
func (p *Postgres) SetBudget(b *Budget) { p.budget.Store(b) }

// Budget is the budget set by SetBudget, or nil.
func (p *Postgres) Budget() *Budget { return p.budget.Load() }

// Done is closed once the start has finished, well or not.
func (p *Postgres) Done() <-chan struct{} { return p.done }

// Progress is the newest progress line of a start under way, such as
// "initdb…"; "ready" once it is done.
func (p *Postgres) Progress() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.progress
}

// Download says how far a download of PostgreSQL's binaries is while one
// is under way (the download way, the first time); ok is false otherwise.
// Its Fraction is the share of the bytes in, when the size is known.
func (p *Postgres) Download() (d pgtemp.DownloadProgress, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.download == nil {
		return d, false
	}
	return *p.download, true
}

// Status says where the start stands: ready is true once the server
// answers; took is how long the start took; err is set when it failed. All
// are zero while the start is under way.
func (p *Postgres) Status() (ready bool, took time.Duration, err error) {
	select {
	case <-p.done:
	default:
		return false, 0, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err == nil, p.took, p.err
}

// Describe is one line about the server for people, e.g. "local PostgreSQL
// 15.18 (…), cluster in /dev/shm/learn-… running as postgres"; "" until it
// is ready.
func (p *Postgres) Describe() string {
	if ready, _, _ := p.Status(); !ready {
		return ""
	}
	p.mu.Lock()
	shown := p.shown
	p.mu.Unlock()
	if shown != "" {
		return shown
	}
	return p.srv.Describe()
}

// SetDescription makes Describe say text instead of the server's own line,
// which names the host's paths and user: a workshop's attendees are shown
// the database they share, not where it lives on the presenter's machine.
func (p *Postgres) SetDescription(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shown = text
}

// Server is the running server once the start has succeeded, else nil.
func (p *Postgres) Server() *pgtemp.Server {
	if ready, _, _ := p.Status(); !ready {
		return nil
	}
	return p.srv
}

// Wait waits for the start to finish, and while learn starts the server
// again after it exited, for it to be up; it returns the server as a
// sim.Database (Database), or the start's error, or why the server is gone,
// or ctx's error if ctx ends first.
func (p *Postgres) Wait(ctx context.Context) (sim.Database, error) { return p.waitUp(ctx, nil) }

// waitUp is Wait; while it waits for the server to start again it tells
// onWait why (and "" once it is up), when onWait is not nil.
func (p *Postgres) waitUp(ctx context.Context, onWait func(string)) (sim.Database, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	srv, err := p.srv, p.err
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	for waited := false; ; waited = true {
		ch, h := srv.HealthChanged(), srv.Health()
		switch h.State {
		case pgtemp.Up:
			if waited && onWait != nil {
				onWait("")
			}
			return Database(srv), nil
		case pgtemp.Gone:
			return nil, &downError{h: h, err: errors.New("nothing can run on it")}
		}
		if onWait != nil {
			onWait("waiting for PostgreSQL to start again: " + h.Exit)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close cancels a start under way, waits for it, and stops the server if
// Launch started it. Safe to call twice.
func (p *Postgres) Close() error {
	p.cancel()
	<-p.done
	p.mu.Lock()
	srv, owned := p.srv, p.owned
	p.mu.Unlock()
	if srv == nil || !owned {
		return nil
	}
	return srv.Close()
}

// errStopped is the error of a run that was stopped before it finished.
var errStopped = errors.New("the run was stopped")
