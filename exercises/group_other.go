//go:build !unix

package exercises

import (
	"os"
	"os/exec"
	"syscall"
)

// groupAttr is empty where there are no process groups.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// stopGroup kills the go command.
func stopGroup(cmd *exec.Cmd) error { return cmd.Process.Signal(os.Kill) }

// killGroup kills the instance.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
