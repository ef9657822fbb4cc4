package cluster

import (
	"errors"
	"fmt"

	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/shm"
)

// The end of a cluster: close (the postmaster stopped, the directory
// removed), abandon (a start that failed), and remove.

// close stops the postmaster and removes the directory. It is idempotent.
func (c *Cluster) close() error {
	c.closeOnce.Do(func() {
		if c.watchStop != nil {
			c.watchStop() // a restart under way gives up
			<-c.watchDone
		}
		if c.pm != nil {
			c.pm.StopPostmaster(fastShutdown)
		}
		c.closeErr = c.remove()
	})
	return c.closeErr
}

// abandon ends a start that failed or was cancelled: the postmaster gets
// SIGQUIT (immediate shutdown, which also removes its shared memory) and
// quitWait to stop before its process group is killed; then the directory
// goes. It runs once, before the cluster is handed out, so close is never
// called on it.
func (c *Cluster) abandon() {
	if c.pm != nil {
		c.pm.Quit(quitWait)
	}
	c.remove()
}

// remove removes the System V shared memory segment a killed postmaster or
// initdb left, then the directory. Every process of the cluster must have
// exited.
func (c *Cluster) remove() error {
	var errs []error
	pmPID := 0
	if c.pm != nil {
		pmPID = c.pm.PID()
	}
	if _, err := shm.Release(c.data(), c.run.UID, pmPID); err != nil {
		errs = append(errs, fmt.Errorf("could not remove the PostgreSQL cluster's shared memory: %w; `ipcs -m` lists it, `ipcrm -m <id>` removes it", err))
	}
	if c.root != nil {
		c.root.Close()
	}
	// os.RemoveAll never follows a link: it removes one that replaced the
	// directory, and everything below it through handles of its own.
	if err := clusterdir.RemoveAll(c.dir); err != nil {
		errs = append(errs, fmt.Errorf("could not remove the PostgreSQL cluster directory: %w; remove %s by hand", err, c.dir))
	}
	return errors.Join(errs...)
}
