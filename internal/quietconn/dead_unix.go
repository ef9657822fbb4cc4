//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package quietconn

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Dead reports whether the peer has spoken on, or closed, an idle
// request/response connection: on one that sits in a pool nothing is due,
// so a byte waiting (the FATAL a PostgreSQL restart sends) or the end of
// the stream means it is dead. It peeks without blocking and without
// taking the byte, and never waits, not even for another reader of the
// connection; on anything it cannot check it reports false.
func Dead(c net.Conn) bool {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok { // TLS: the socket beneath
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	dead := false
	// Control, not Read: RawConn.Read takes the descriptor's read lock, and
	// pgconn's background reader may hold it, blocked in a read of its own
	// on this idle connection (it starts when a write is slow), so Read
	// would wait for that read to end: for ever, on an idle connection.
	_ = raw.Control(func(fd uintptr) {
		// A raw system call, as quietConn's reads and writes are: it never
		// blocks (MSG_DONTWAIT), and it does not wake Go's sysmon.
		var b [1]byte
		_, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
			unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
		if errno != 0 { // nothing waiting, or the socket is broken
			dead = errno != unix.EAGAIN && errno != unix.EINTR
		} else { // a byte waiting, or the end of the stream (0 bytes)
			dead = true
		}
	})
	return dead
}
