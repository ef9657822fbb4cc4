//go:build unix

package exercises

import (
	"os/exec"
	"syscall"
)

// buildAttr puts the go command in a process group of its own, with the
// compilers it starts.
func buildAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// stopGroup interrupts cmd's process group: go removes its work directory
// and stops its compilers (exec.Cmd's WaitDelay kills what is left).
func stopGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
