//go:build !linux

package pgtemp

import "time"

// childPIDs finds no children where there is no /proc: a postmaster's
// backends that cannot act on its SIGQUIT may then outlive it.
func childPIDs(int) []int { return nil }

// waitEnded has no /proc to watch here: it returns at once.
func waitEnded([]int, time.Duration) {}

// processesIn finds none where there is no /proc: a restart then relies on
// the backends of a killed postmaster ending by themselves (PostgreSQL
// refuses to start while they run).
func processesIn(string, int) []int { return nil }
