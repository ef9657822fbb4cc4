package exercises

import "syscall"

// deathSignal makes the kernel send sig to the process when learn dies
// (prctl PR_SET_PDEATHSIG), so that none outlives a learn that was killed.
func deathSignal(a *syscall.SysProcAttr, sig syscall.Signal) *syscall.SysProcAttr {
	a.Pdeathsig = sig
	return a
}
