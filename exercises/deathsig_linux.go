package exercises

import "syscall"

// instanceAttr makes the kernel kill an API instance when learn dies
// (prctl PR_SET_PDEATHSIG), so that none outlives a learn that was killed.
func instanceAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
