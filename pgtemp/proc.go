package pgtemp

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// proc is a PostgreSQL program learn started: the postmaster, or initdb.
//
// The kernel sends the parent-death signal (SysProcAttr.Pdeathsig) when the
// thread that forked the child exits, not when the process does. Go may end
// an OS thread while learn keeps running (when a goroutine locked to it
// exits), so the child is forked from a goroutine that locks its thread and
// keeps it until the child has exited. Then the signal comes only when learn
// itself dies.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the child has exited and was reaped
	err  error         // cmd.Wait's result, readable after done
	// logDone, when not nil, is closed once the child's log is copied
	// whole: every process that held its pipe has exited.
	logDone chan struct{}
}

// logDrain bounds how long learn waits, after a postmaster exited, for the
// end of its log: its backends, which hold the same pipe, end as soon as
// they notice that it is gone.
const logDrain = 2 * time.Second

// drained waits up to d until the child's log is copied whole.
func (p *proc) drained(d time.Duration) {
	if p.logDone == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.logDone:
	case <-t.C:
	}
}

// startProc starts cmd (which must have SysProcAttr.Setpgid set) and returns
// once it runs.
func startProc(cmd *exec.Cmd) (*proc, error) {
	p := &proc{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine, after the child
		defer close(p.done)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the child alone, if it has not exited yet.
func (p *proc) signal(sig syscall.Signal) {
	if !p.exited() {
		syscall.Kill(p.pid(), sig)
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
func (p *proc) killGroup() {
	if !p.exited() {
		kids := childPIDs(p.pid())
		for _, c := range kids {
			syscall.Kill(c, syscall.SIGKILL)
		}
		syscall.Kill(-p.pid(), syscall.SIGKILL)
		// SIGKILL ends them asynchronously; they are not ours to wait
		// for, so watch them end (at most a second).
		waitEnded(kids, time.Second)
	}
}

// wait waits up to d for the child to exit and reports whether it did.
func (p *proc) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
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
func (p *proc) interrupt(grace time.Duration) {
	if !p.exited() {
		syscall.Kill(-p.pid(), syscall.SIGINT)
	}
	if !p.wait(grace) {
		p.killGroup()
		<-p.done
	}
	waitGroupGone(p.pid(), 200*time.Millisecond)
}

func (p *proc) kill() {
	p.killGroup()
	<-p.done
	waitGroupGone(p.pid(), 200*time.Millisecond)
}

// stopPostmaster shuts a postmaster down: SIGINT (fast shutdown: roll back,
// checkpoint, exit), then after fast SIGQUIT (immediate shutdown), then
// SIGKILL to the whole process group.
func (p *proc) stopPostmaster(fast time.Duration) {
	p.signal(syscall.SIGINT)
	if p.wait(fast) {
		return
	}
	p.quit(2 * time.Second)
}

// quit sends a postmaster SIGQUIT (immediate shutdown: it stops its
// backends at once and removes its shared memory, which SIGKILL would
// leave), and SIGKILL to its process group if it has not exited after d.
func (p *proc) quit(d time.Duration) {
	p.signal(syscall.SIGQUIT)
	if p.wait(d) {
		waitGroupGone(p.pid(), 200*time.Millisecond)
		return
	}
	p.kill()
}

func waitGroupGone(pgid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
