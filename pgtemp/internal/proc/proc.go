// Package proc runs and ends the PostgreSQL programs learn starts
// (initdb, the postmaster) so that nothing of them outlives learn:
//
//   - [Start] forks from a goroutine that keeps its OS thread, so the
//     parent-death signal comes only when learn dies; [Proc] is the child.
//   - [Proc.StopPostmaster], [Proc.Quit], [Proc.Interrupt] and [Proc.Kill]
//     are the shutdowns, from fast to SIGKILL of the process group and of
//     each backend (which lead sessions of their own).
//   - children_linux.go reads /proc: the children of a process
//     ([ChildPIDs]), the processes working in a directory ([ProcessesIn]),
//     and waiting for processes that are not ours to end ([WaitEnded]);
//     children_other.go does without.
//   - [WaitUntil] and [WaitGroupGone] wait for a condition learn can only
//     poll (nothing tells a non-parent that a process ended).
package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// Proc is a PostgreSQL program learn started: the postmaster, or initdb.
//
// The kernel sends the parent-death signal (SysProcAttr.Pdeathsig) when the
// thread that forked the child exits, not when the process does. Go may end
// an OS thread while learn keeps Running (when a goroutine locked to it
// exits), so the child is forked from a goroutine that locks its thread and
// keeps it until the child has exited. Then the signal comes only when learn
// itself dies.
type Proc struct {
	Cmd  *exec.Cmd
	Done chan struct{} // closed once the child has exited and was reaped
	Err  error         // Cmd.Wait's result, readable after done
	// logDone, when not nil, is closed once the child's log is copied
	// whole: every process that held its pipe has exited.
	LogDone chan struct{}
}

// LogDrain bounds how long learn waits, after a postmaster exited, for the
// end of its log: its backends, which hold the same pipe, end as soon as
// they notice that it is gone.
const LogDrain = 2 * time.Second

// drained waits up to d until the child's log is copied whole.
func (p *Proc) Drained(d time.Duration) {
	if p.LogDone == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.LogDone:
	case <-t.C:
	}
}

// Start starts cmd (which must have SysProcAttr.Setpgid set) and returns
// once it runs.
func Start(cmd *exec.Cmd) (*Proc, error) {
	p := &Proc{Cmd: cmd, Done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine, after the child
		defer close(p.Done)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.Err = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Proc) PID() int { return p.Cmd.Process.Pid }

func (p *Proc) Exited() bool {
	select {
	case <-p.Done:
		return true
	default:
		return false
	}
}

// signal sends sig to the child alone, if it has not exited yet.
func (p *Proc) Signal(sig syscall.Signal) {
	if !p.Exited() {
		syscall.Kill(p.PID(), sig)
	}
}

// killGroup sends SIGKILL to the child's whole process group (the child and
// everything it started) and to each of the child's own children, if the
// child has not been reaped yet, so the ids are still ours, and returns
// once the children have ended (Linux; at most a second). The children
// first: a postmaster's backends lead sessions of their own (PostgreSQL's
// InitPostmasterChild calls setsid), so the group's SIGKILL misses them,
// and a backend that cannot act on the postmaster's SIGQUIT (stopped,
// hung) would outlive it, re-parented to init.
//
// A process that SIGKILL ends cannot remove its POSIX shared memory
// (/dev/shm/PostgreSQL.*, the dynamic shared memory of initdb's
// bootstrap backend), which the kernel then keeps until the machine
// restarts: the processes are stopped first, the files they map read,
// and once they are killed those files are removed (a file still mapped
// is freed when its last mapping ends).
func (p *Proc) KillGroup() {
	if !p.Exited() {
		kids := ChildPIDs(p.PID())
		for _, c := range kids {
			syscall.Kill(c, syscall.SIGSTOP)
		}
		syscall.Kill(-p.PID(), syscall.SIGSTOP)
		shm := MappedShm(append(GroupPIDs(p.PID()), kids...))
		for _, c := range kids {
			syscall.Kill(c, syscall.SIGKILL)
		}
		syscall.Kill(-p.PID(), syscall.SIGKILL)
		// SIGKILL ends them asynchronously; they are not ours to wait
		// for, so watch them end (at most a second).
		WaitEnded(kids, time.Second)
		for _, f := range shm {
			_ = os.Remove(f)
		}
	}
}

// wait waits up to d for the child to exit and reports whether it did.
func (p *Proc) Wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.Done:
		return true
	case <-t.C:
		return false
	}
}

// kill ends the child and its process group at once and waits until the
// child is reaped and the group is gone (briefly; orphans that already died
// may linger as zombies until init reaps them, and they write nothing).
// interrupt stops a child as Ctrl-C would: SIGINT to its process group,
// then SIGKILL to the group if it has not exited after grace. initdb on
// SIGINT removes what it made and its bootstrap backend exits normally,
// removing its POSIX shared memory (/dev/shm/PostgreSQL.*), which a
// SIGKILL would leave behind until the machine restarts.
func (p *Proc) Interrupt(grace time.Duration) {
	if !p.Exited() {
		syscall.Kill(-p.PID(), syscall.SIGINT)
	}
	if !p.Wait(grace) {
		p.KillGroup()
		<-p.Done
	}
	WaitGroupGone(p.PID(), 200*time.Millisecond)
}

func (p *Proc) Kill() {
	p.KillGroup()
	<-p.Done
	WaitGroupGone(p.PID(), 200*time.Millisecond)
}

// stopPostmaster shuts a postmaster down: SIGINT (fast shutdown: roll back,
// checkpoint, exit), then after fast SIGQUIT (immediate shutdown), then
// SIGKILL to the whole process group.
func (p *Proc) StopPostmaster(fast time.Duration) {
	p.Signal(syscall.SIGINT)
	if p.Wait(fast) {
		return
	}
	p.Quit(2 * time.Second)
}

// quit sends a postmaster SIGQUIT (immediate shutdown: it stops its
// backends at once and removes its shared memory, which SIGKILL would
// leave), and SIGKILL to its process group if it has not exited after d.
func (p *Proc) Quit(d time.Duration) {
	p.Signal(syscall.SIGQUIT)
	if p.Wait(d) {
		WaitGroupGone(p.PID(), 200*time.Millisecond)
		return
	}
	p.Kill()
}

func WaitGroupGone(pgid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// WaitUntil polls cond every 10 ms for up to d and reports whether it held:
// for conditions nothing signals (another process's end, a file).
func WaitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SameDir reports whether the resolved path cwd (from /proc/<pid>/cwd) is
// the directory dir, whose path may go through symbolic links.
func SameDir(cwd, dir string) bool {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return cwd == dir
}
