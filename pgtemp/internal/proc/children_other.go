//go:build !linux

package proc

import "time"

// ChildPIDs finds no children where there is no /proc: a postmaster's
// backends that cannot act on its SIGQUIT may then outlive it.
func ChildPIDs(int) []int { return nil }

// WaitEnded has no /proc to watch here: it returns at once.
func WaitEnded([]int, time.Duration) {}

// ProcessesIn finds none where there is no /proc: a restart then relies on
// the backends of a killed postmaster ending by themselves (PostgreSQL
// refuses to start while they run).
func ProcessesIn(string, int) []int { return nil }

// GroupPIDs finds none where there is no /proc.
func GroupPIDs(int) []int { return nil }

// MappedShm finds none where there is no /proc (macOS has no /dev/shm).
func MappedShm([]int) []string { return nil }
