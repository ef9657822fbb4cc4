//go:build !unix

package exercises

import (
	"os"
	"os/exec"
	"syscall"
)

// buildAttr is empty where there are no process groups.
func buildAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// stopGroup kills the go command.
func stopGroup(cmd *exec.Cmd) error { return cmd.Process.Signal(os.Kill) }
