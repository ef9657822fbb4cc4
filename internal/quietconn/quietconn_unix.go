//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package quietconn

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn is a connection whose reads and writes are made as raw system
// calls, without telling Go's scheduler that a system
// call is under way. The socket is non-blocking (Go's netpoller waits for
// it), so a read or write returns at once: it copies bytes or says
// EAGAIN, and the wait itself still goes through the netpoller, deadlines
// and all.
//
// Why: the engine's connections are request/response, so between two
// answers every goroutine waits and all of Go's Ps go idle; the runtime's
// monitor thread (sysmon) then sleeps deeply, and the first system call
// after the wait wakes it again and has it tick every 20 µs (runtime
// proc.go, "If it wakes from a syscall it resets idle and delay"). A
// booking makes that trip twice. In BenchmarkBookTicket at 8 clients on 2
// cores, raw reads and writes (and Dead's raw peek) took the
// client from 70 to 50 µs of CPU and from 5.3 to 3.3 context switches per
// booking, and the engine from 0.82x to about 0.90x of pgbench. Reads and
// writes of a few hundred bytes on a non-blocking socket do not need the
// scheduler's system-call bookkeeping.
type Conn struct {
	net.Conn // *net.UnixConn or *net.TCPConn: the rest (Close, deadlines, addresses)
	raw      syscall.RawConn
	rd, wr   rawOp // Read's and Write's, so that neither allocates
}

// rawOp is one direction's read(2) or write(2) as RawConn.Read and Write
// call it: the buffer, what came of it, and the function itself, bound
// once, as a closure made on each call would be allocated on the heap.
// mu keeps two Reads (or two Writes) of one connection apart.
type rawOp struct {
	mu    sync.Mutex
	p     []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// run has call (the RawConn's Read or Write) call op.fn over p, and
// returns the bytes moved, the system call's error and call's own.
func (op *rawOp) run(call func(func(fd uintptr) bool) error, p []byte) (int, syscall.Errno, error) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.p, op.n, op.errno = p, 0, 0
	err := call(op.fn)
	op.p = nil
	return op.n, op.errno, err
}

// read is rawOp.fn for Read: one read(2) into p; false on EAGAIN, so the
// netpoller waits for the socket and calls it again.
func (op *rawOp) read(fd uintptr) bool {
	for {
		r, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&op.p[0])), uintptr(len(op.p)))
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		op.n, op.errno = int(r), e
		return true
	}
}

// write is rawOp.fn for Write: write(2)s until all of p is written (n
// counts what is), false on EAGAIN to wait for room in the socket.
func (op *rawOp) write(fd uintptr) bool {
	for op.n < len(op.p) { // a write may take part of p
		r, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&op.p[op.n])), uintptr(len(op.p)-op.n))
		switch e {
		case 0:
			op.n += int(r)
		case unix.EINTR:
		case unix.EAGAIN:
			return false
		default:
			op.errno = e
			return true
		}
	}
	return true
}

// Wrap returns c with quiet reads and writes (see the package doc) when
// it is a Unix or TCP socket, and c as it is otherwise. The connection
// returned still has c's deadlines, Close and addresses, and a
// SyscallConn that Dead peeks through.
func Wrap(c net.Conn) net.Conn {
	var sc syscall.Conn
	switch s := c.(type) {
	case *net.UnixConn:
		sc = s
	case *net.TCPConn:
		sc = s
	default:
		return c
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	q := &Conn{Conn: c, raw: raw}
	q.rd.fn, q.wr.fn = q.rd.read, q.wr.write
	return q
}

// SyscallConn is the socket's raw connection (Dead peeks through it).
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.raw, nil }

// Read reads into p: one read(2) of at most len(p) bytes once the socket
// is readable. io.EOF at the end of the stream.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, errno, err := c.rd.run(c.raw.Read, p)
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, waiting in the netpoller whenever the socket's
// buffer is full.
func (c *Conn) Write(p []byte) (int, error) {
	done, errno, err := c.wr.run(c.raw.Write, p)
	switch {
	case err != nil:
		return done, c.opError("write", err)
	case errno != 0:
		return done, c.opError("write", os.NewSyscallError("write", errno))
	}
	return done, nil
}

// opError wraps err as the net package does, so a deadline passed is still
// a net.Error whose Timeout is true and net.ErrClosed still matches.
func (c *Conn) opError(op string, err error) error {
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return err
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
