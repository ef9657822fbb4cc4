//go:build unix

package exercises

import (
	"os/exec"
	"syscall"
)

// groupAttr puts a process in a process group of its own, with whatever
// it starts: the go command and its compilers, an API instance and the
// processes the learner's code starts.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// stopGroup interrupts cmd's process group: go removes its work directory
// and stops its compilers (exec.Cmd's WaitDelay kills what is left).
func stopGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }

// killGroup kills cmd's process group: an instance and every process it
// started that stayed in its group.
func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
