//go:build !linux

package runas

import "syscall"

// setDeathSignal does nothing where the kernel has no parent-death signal:
// a cluster whose learn was killed is removed by the next run's reaper.
func setDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
