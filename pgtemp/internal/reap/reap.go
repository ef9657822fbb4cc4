// Package reap removes the clusters of learn processes that were killed
// outright, by the rules below, in the directories clusters live in
// ([Clusters]); pgtemp's Reap adds the template copies (template.ReapCopies),
// the Docker way reaps its containers and the URL way its schemas by the
// same owner rules (package owner).
package reap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/learn-idempotency/learn/pgtemp/internal/clusterdir"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/learn-idempotency/learn/pgtemp/internal/proc"
	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/shm"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
)

// Reaping: a learn process that was killed outright (SIGKILL, a power cut
// of the terminal, the OOM killer) cannot remove its cluster. Its postmaster
// gets SIGQUIT from the kernel (Pdeathsig) and stops, but the directory
// stays, and when the postmaster itself was SIGKILLed so does its System V
// shared memory segment. The next learn removes them.
//
// The rules, in the order they are checked for every directory
// <parent>/learn-<digits> (the names os.MkdirTemp gives learn's clusters) in
// every parent a cluster may live in (reapParents):
//
//   - It must be a real directory owned by learn's user or by the user the
//     cluster runs as (postgres or nobody when learn is root). Anything else
//     is not learn's and is left alone.
//   - With a learn.owner file (written by this user; see owner.Read): the
//     cluster is orphaned only when its learn process is gone: the pid does
//     not exist, the machine rebooted since, or the pid now belongs to a
//     process that started at another time (pid reuse). A cluster whose
//     learn is alive is never touched, whoever that learn is (another
//     terminal, another test binary).
//   - Without an owner file: learn writes it right after creating the
//     directory, so a directory without one is either being created this
//     instant or was left by an older learn killed before its postmaster
//     ran. It is removed only when it clearly is learn's: older than
//     OwnerlessGrace, holding nothing but the names a cluster directory
//     holds, and with no process in its postmaster.pid. Otherwise it is left
//     alone.
//   - Before removing an orphan, its postmaster is stopped if it still runs
//     and is provably the one the owner file names (same pid and start
//     time): SIGQUIT, then SIGKILL to its process group after orphanQuitWait.
//     If a server still answers on the directory's socket after that (a
//     postmaster learn cannot see, e.g. in another pid namespace sharing
//     /tmp), the directory is left alone.
//   - Then its System V shared memory segment, if one is left (see
//     shm.Release), and the directory are removed.

const (
	// OwnerlessGrace is how old a directory without an owner file must be
	// before it may be reaped.
	OwnerlessGrace = time.Minute
	// orphanQuitWait is how long an orphaned postmaster gets to stop after
	// SIGQUIT before its process group is killed.
	orphanQuitWait = 3 * time.Second
)

// Report says what Reap found.
type Report struct {
	// Removed lists the orphaned clusters that were removed.
	Removed []ReapedCluster
	// InUse lists cluster directories whose learn process is alive; they
	// were not touched.
	InUse []string
	// Skipped lists learn-* directories left alone for another reason.
	Skipped []SkippedDir
	// Copies lists the interrupted template copies removed from learn's
	// cache directory (see template.ReapCopies).
	Copies []template.RemovedCopy
}

// ReapedCluster is one orphaned cluster Reap removed.
type ReapedCluster struct {
	Dir string
	// LearnPID is the pid of the learn process that made it (0 when the
	// directory had no owner file).
	LearnPID int
	// Why says why it counted as orphaned, e.g. "learn pid 1234 is gone".
	Why string
	// StoppedPostmaster is true when its postmaster was still running and
	// Reap stopped it.
	StoppedPostmaster bool
	// RemovedSharedMemory is true when a System V shared memory segment of
	// the cluster was left and Reap removed it.
	RemovedSharedMemory bool
}

// SkippedDir is a learn-* directory Reap left alone, and why.
type SkippedDir struct {
	Dir, Why string
}

// Clusters removes the orphaned clusters in parents (the rules above):
// run is the cluster user (its directories count as learn's too). logf,
// when not nil, gets one line per cluster removed. The report lists what
// was removed, in use and left alone (Copies stays empty: the caller adds
// the template copies); the error joins the failures to remove an orphan,
// or is ctx's error when ctx ends.
func Clusters(ctx context.Context, parents []string, run runas.Runner, logf func(string, ...any)) (Report, error) {
	var rep Report
	var errs []error
	for _, parent := range parents {
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue // no such parent here (no /dev/shm on macOS)
		}
		for _, e := range entries {
			if !clusterdir.IsName(e.Name()) || !e.IsDir() { // a symlink is not IsDir
				continue
			}
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			dir := filepath.Join(parent, e.Name())
			v := judge(dir, run)
			switch v.kind {
			case inUse:
				rep.InUse = append(rep.InUse, dir)
				continue
			case leaveAlone:
				rep.Skipped = append(rep.Skipped, SkippedDir{dir, v.why})
				continue
			}
			rc, skip, err := removeOrphan(dir, v, run)
			switch {
			case err != nil:
				errs = append(errs, err)
			case skip != "":
				rep.Skipped = append(rep.Skipped, SkippedDir{dir, skip})
			default:
				rep.Removed = append(rep.Removed, rc)
				if logf != nil {
					logf("%s", rc)
				}
			}
		}
	}
	return rep, errors.Join(errs...)
}

func (rc ReapedCluster) String() string {
	var b strings.Builder
	if rc.LearnPID > 0 {
		fmt.Fprintf(&b, "removed an orphaned cluster of learn pid %d in %s", rc.LearnPID, rc.Dir)
	} else {
		fmt.Fprintf(&b, "removed an orphaned cluster directory without an owner file: %s", rc.Dir)
	}
	var did []string
	if rc.StoppedPostmaster {
		did = append(did, "stopped its postmaster")
	}
	if rc.RemovedSharedMemory {
		did = append(did, "removed its System V shared memory segment")
	}
	if len(did) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(did, ", "))
	}
	return b.String()
}

type verdictKind int

const (
	orphaned verdictKind = iota
	inUse
	leaveAlone
)

type verdict struct {
	kind verdictKind
	why  string
	own  owner.Record // when the directory has an owner file
}

// judge applies the reaping rules to one directory.
func judge(dir string, run runas.Runner) verdict {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return verdict{kind: leaveAlone, why: "not a directory"}
	}
	if uid, ok := owner.FileUID(fi); !ok || (uid != os.Geteuid() && uid != run.UID) {
		return verdict{kind: leaveAlone, why: "owned by another user"}
	}
	o, err := owner.Read(dir)
	switch {
	case err == nil:
		if gone, why := o.LearnGone(); gone {
			return verdict{kind: orphaned, why: why, own: o}
		}
		return verdict{kind: inUse}
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, owner.ErrNoOwner):
		return verdict{kind: leaveAlone, why: err.Error()}
	}

	// No owner file.
	if age := time.Since(newestMtime(dir, filepath.Join(dir, "data"))); age < OwnerlessGrace {
		return verdict{kind: leaveAlone, why: fmt.Sprintf("no owner file and only %s old: it may be starting", age.Round(time.Second))}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return verdict{kind: leaveAlone, why: err.Error()}
	}
	for _, e := range entries {
		if !clusterdir.IsEntry(e.Name()) {
			return verdict{kind: leaveAlone, why: fmt.Sprintf("no owner file, and %s is not something learn puts in a cluster directory", e.Name())}
		}
	}
	if pid, _, _ := shm.ReadPidFile(filepath.Join(dir, "data")); pid != 0 && owner.PIDExists(pid) {
		if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err != nil || proc.SameDir(cwd, filepath.Join(dir, "data")) {
			return verdict{kind: leaveAlone, why: fmt.Sprintf("no owner file, and pid %d of its postmaster.pid may be its server", pid)}
		}
	}
	return verdict{kind: orphaned, why: "no owner file, older than " + OwnerlessGrace.String() + ", nothing running"}
}

// removeOrphan stops what still runs of an orphaned cluster and removes it.
// skip is not empty when the cluster turned out to be in use after all.
func removeOrphan(dir string, v verdict, run runas.Runner) (rc ReapedCluster, skip string, err error) {
	rc = ReapedCluster{Dir: dir, LearnPID: v.own.LearnPID, Why: v.why}
	data := filepath.Join(dir, "data")
	if pid := orphanPostmaster(v.own, data); pid > 0 {
		stopOrphanPostmaster(pid)
		rc.StoppedPostmaster = true
	}
	if SocketAnswers(dir) {
		return rc, "its learn is gone but a server still answers on its socket, and learn cannot tell which process it is", nil
	}
	// The owner file is learn's own (owner.Read trusts no other), so the
	// postmaster pid it names is the one the segment's creator must be.
	if removed, err := shm.Release(data, run.UID, v.own.PMPID); err != nil {
		return rc, "", fmt.Errorf("could not remove the shared memory of the orphaned cluster in %s: %w", dir, err)
	} else {
		rc.RemovedSharedMemory = removed
	}
	if err := clusterdir.RemoveAll(dir); err != nil {
		return rc, "", fmt.Errorf("could not remove the orphaned cluster in %s: %w; remove it by hand", dir, err)
	}
	return rc, "", nil
}

// orphanPostmaster returns the pid of the orphaned cluster's postmaster if
// it still runs and provably is that postmaster, else 0: the pid the owner
// file names with the same start time, or the pid in postmaster.pid when its
// working directory is the data directory (PostgreSQL processes chdir there;
// this covers a postmaster the owner file does not name yet).
func orphanPostmaster(o owner.Record, data string) int {
	if o.PMPID > 0 && owner.SameProcess(o.PMPID, o.PMTicks) {
		return o.PMPID
	}
	if pid, _, _ := shm.ReadPidFile(data); pid > 0 && owner.PIDExists(pid) {
		cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if err == nil && proc.SameDir(cwd, data) {
			return pid
		}
	}
	return 0
}

// stopOrphanPostmaster sends SIGQUIT (immediate shutdown: the postmaster
// stops its backends and removes its shared memory), then SIGKILL to its
// process group if it still runs after orphanQuitWait. learn started it
// with a process group of its own.
func stopOrphanPostmaster(pid int) {
	ticks := owner.StartTicks(pid)
	alive := func() bool {
		if ticks == "" {
			return owner.PIDExists(pid)
		}
		return owner.SameProcess(pid, ticks)
	}
	syscall.Kill(pid, syscall.SIGQUIT)
	if proc.WaitUntil(orphanQuitWait, func() bool { return !alive() }) {
		return
	}
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		syscall.Kill(-pid, syscall.SIGKILL)
	} else {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	proc.WaitUntil(2*time.Second, func() bool { return !alive() })
	proc.WaitGroupGone(pid, 500*time.Millisecond)
}

// SocketAnswers reports whether a server accepts connections on the
// cluster's Unix socket.
func SocketAnswers(dir string) bool {
	conn, err := net.DialTimeout("unix", filepath.Join(dir, clusterdir.SocketName), 500*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// newestMtime returns the latest modification time of the paths that exist
// (the zero time when none does).
func newestMtime(paths ...string) time.Time {
	var t time.Time
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	return t
}
