package runas

import "syscall"

// setDeathSignal asks the kernel to send sig to the child when learn dies
// (prctl PR_SET_PDEATHSIG).
func setDeathSignal(attr *syscall.SysProcAttr, sig syscall.Signal) { attr.Pdeathsig = sig }
