package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/pgtemp"
)

// dbLauncher starts the throwaway PostgreSQL in the background as soon as
// learn starts, so reading works at once while the database gets ready.
// Close always stops it and removes what it made, whether it has finished
// starting, is still starting, or failed.
type dbLauncher struct {
	cancel  context.CancelFunc
	done    chan struct{}
	started time.Time

	mu       sync.Mutex
	progress string // the latest progress line, for the spinner
	srv      *pgtemp.Server
	err      error
	took     time.Duration
}

func launchDB(opts pgtemp.Options) *dbLauncher {
	ctx, cancel := context.WithCancel(context.Background())
	l := &dbLauncher{cancel: cancel, done: make(chan struct{}), started: time.Now(), progress: "looking for PostgreSQL"}
	opts.Logf = func(format string, args ...any) {
		l.mu.Lock()
		l.progress = fmt.Sprintf(format, args...)
		l.mu.Unlock()
	}
	go func() {
		defer close(l.done)
		defer func() {
			if r := recover(); r != nil {
				l.mu.Lock()
				l.err = fmt.Errorf("starting PostgreSQL panicked: %v", r)
				l.mu.Unlock()
			}
		}()
		srv, err := pgtemp.Start(ctx, opts)
		l.mu.Lock()
		l.srv, l.err, l.took = srv, err, time.Since(l.started)
		l.mu.Unlock()
	}()
	return l
}

// status returns the latest progress line of the start.
func (l *dbLauncher) status() (progress string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.progress
}

// dbReadyMsg says the start has finished, with the server or the error.
type dbReadyMsg struct {
	srv  *pgtemp.Server
	err  error
	took time.Duration
}

// waitCmd waits in the background for the start to finish.
func (l *dbLauncher) waitCmd() tea.Cmd {
	return func() tea.Msg {
		<-l.done
		l.mu.Lock()
		defer l.mu.Unlock()
		return dbReadyMsg{srv: l.srv, err: l.err, took: l.took}
	}
}

// Close cancels a start in progress, waits for it, and stops the server.
func (l *dbLauncher) Close() error {
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv == nil {
		return nil
	}
	return l.srv.Close()
}
