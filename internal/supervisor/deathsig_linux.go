package supervisor

import "syscall"

// childAttr makes the kernel send SIGTERM to the child when the supervising
// parent dies (prctl PR_SET_PDEATHSIG): the child then quits as on any
// SIGTERM, restoring the terminal and removing its PostgreSQL.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} }
