//go:build !linux

package exercises

import "syscall"

// instanceAttr is empty where the kernel has no parent-death signal.
func instanceAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
