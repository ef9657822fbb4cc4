//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package workshop

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// pending reports whether c's peer has sent bytes that the server has not
// read yet (they wait in the socket): a client whose version line came
// before its goroutine ran has said something.
func pending(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	_ = raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), inqRequest) })
	return n > 0
}
