package exit

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// RootContext is cancelled, with a [Signalled] cause, by the first SIGINT,
// SIGTERM or SIGHUP: learn catches them from the start, so that none kills
// it before it has cleaned up (an early Ctrl-C used to kill the process
// outright). stop stops catching them.
func RootContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case sig := <-sigs:
			cancel(Signalled(sig.(syscall.Signal)))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel(context.Canceled)
	}
}
