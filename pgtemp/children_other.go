//go:build !linux

package pgtemp

import "time"

// childPIDs finds no children where there is no /proc: a postmaster's
// backends that cannot act on its SIGQUIT may then outlive it.
func childPIDs(int) []int { return nil }

// waitEnded has no /proc to watch here: it returns at once.
func waitEnded([]int, time.Duration) {}
