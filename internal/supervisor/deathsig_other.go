//go:build !linux

package supervisor

import "syscall"

// childAttr is empty where the kernel has no parent-death signal.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
