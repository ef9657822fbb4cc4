//go:build !linux

package exercises

import "syscall"

// deathSignal leaves a as it is where the kernel has no parent-death
// signal.
func deathSignal(a *syscall.SysProcAttr, _ syscall.Signal) *syscall.SysProcAttr { return a }
