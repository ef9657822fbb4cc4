//go:build unix

package supervisor

import (
	"os"

	"golang.org/x/sys/unix"
)

// foreground reports whether this process's group is the foreground group
// of the terminal tty: only then may it draw without stopping on SIGTTOU.
func foreground(tty *os.File) bool {
	fg, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}
