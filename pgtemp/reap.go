package pgtemp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
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
//   - With a learn.owner file (written by this user; see readOwner): the
//     cluster is orphaned only when its learn process is gone: the pid does
//     not exist, the machine rebooted since, or the pid now belongs to a
//     process that started at another time (pid reuse). A cluster whose
//     learn is alive is never touched, whoever that learn is (another
//     terminal, another test binary).
//   - Without an owner file: learn writes it right after creating the
//     directory, so a directory without one is either being created this
//     instant or was left by an older learn killed before its postmaster
//     ran. It is removed only when it clearly is learn's: older than
//     ownerlessGrace, holding nothing but the names a cluster directory
//     holds, and with no process in its postmaster.pid. Otherwise it is left
//     alone.
//   - Before removing an orphan, its postmaster is stopped if it still runs
//     and is provably the one the owner file names (same pid and start
//     time): SIGQUIT, then SIGKILL to its process group after orphanQuitWait.
//     If a server still answers on the directory's socket after that (a
//     postmaster learn cannot see, e.g. in another pid namespace sharing
//     /tmp), the directory is left alone.
//   - Then its System V shared memory segment, if one is left (see
//     releaseSharedMemory), and the directory are removed.

const (
	// ownerlessGrace is how old a directory without an owner file must be
	// before it may be reaped.
	ownerlessGrace = time.Minute
	// orphanQuitWait is how long an orphaned postmaster gets to stop after
	// SIGQUIT before its process group is killed.
	orphanQuitWait = 3 * time.Second
)

// ReapReport says what Reap found.
type ReapReport struct {
	// Removed lists the orphaned clusters that were removed.
	Removed []ReapedCluster
	// InUse lists cluster directories whose learn process is alive; they
	// were not touched.
	InUse []string
	// Skipped lists learn-* directories left alone for another reason.
	Skipped []SkippedDir
	// Copies lists the interrupted template copies removed from learn's
	// cache directory (see reapTemplateCopies).
	Copies []RemovedCopy
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

// Reap removes the clusters of learn processes that were killed before they
// could remove them (see the rules above), in every directory learn puts
// clusters in: $TMPDIR, /tmp and /dev/shm; and the template copies that
// learn processes killed while saving a template left in the user cache
// directory (reapTemplateCopies). It never touches a cluster whose learn
// process is alive, nor a copy being made. logf, when not nil, gets one
// line per cluster or copy removed ("removed an orphaned cluster of learn
// pid 1234 in /tmp/learn-…"). The report lists what was removed, in use and
// left alone; the error joins the failures to remove an orphan (the rest of
// the orphans are still removed), or is ctx's error when ctx ends. Start
// runs it before every local cluster; `learn doctor` may run it on its own.
func Reap(ctx context.Context, logf func(format string, args ...any)) (ReapReport, error) {
	run, err := currentRunner()
	if err != nil {
		run = runner{uid: os.Geteuid(), gid: os.Getegid()}
	}
	rep, err := reap(ctx, reapParents(""), run, logf)
	if ctx.Err() != nil {
		return rep, err
	}
	copies, cerr := reapTemplateCopies(cacheRoot(""), logf)
	rep.Copies = copies
	return rep, errors.Join(err, cerr)
}

// reapParents lists the directories clusters are made in: extra (a test's
// parent) when not empty, os.TempDir(), /tmp and the memory directory.
func reapParents(extra string) []string {
	var out []string
	for _, p := range []string{extra, os.TempDir(), "/tmp", memDir} {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func reap(ctx context.Context, parents []string, run runner, logf func(string, ...any)) (ReapReport, error) {
	var rep ReapReport
	var errs []error
	for _, parent := range parents {
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue // no such parent here (no /dev/shm on macOS)
		}
		for _, e := range entries {
			if !isClusterName(e.Name()) || !e.IsDir() { // a symlink is not IsDir
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

// isClusterName reports whether name is one os.MkdirTemp(…, "learn-") gives:
// "learn-" and decimal digits. Other learn-* names (a checkout called
// learn-idempotency, say) are never looked at.
func isClusterName(name string) bool {
	digits, ok := strings.CutPrefix(name, "learn-")
	if !ok || digits == "" {
		return false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
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
	own  owner // when the directory has an owner file
}

// judge applies the reaping rules to one directory.
func judge(dir string, run runner) verdict {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return verdict{kind: leaveAlone, why: "not a directory"}
	}
	if uid, ok := fileUID(fi); !ok || (uid != os.Geteuid() && uid != run.uid) {
		return verdict{kind: leaveAlone, why: "owned by another user"}
	}
	o, err := readOwner(dir)
	switch {
	case err == nil:
		if gone, why := o.learnGone(); gone {
			return verdict{kind: orphaned, why: why, own: o}
		}
		return verdict{kind: inUse}
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNoOwner):
		return verdict{kind: leaveAlone, why: err.Error()}
	}

	// No owner file.
	if age := time.Since(newestMtime(dir, filepath.Join(dir, "data"))); age < ownerlessGrace {
		return verdict{kind: leaveAlone, why: fmt.Sprintf("no owner file and only %s old: it may be starting", age.Round(time.Second))}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return verdict{kind: leaveAlone, why: err.Error()}
	}
	for _, e := range entries {
		if !isClusterEntry(e.Name()) {
			return verdict{kind: leaveAlone, why: fmt.Sprintf("no owner file, and %s is not something learn puts in a cluster directory", e.Name())}
		}
	}
	if pid, _, _ := readPidFile(filepath.Join(dir, "data")); pid != 0 && pidExists(pid) {
		if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err != nil || sameDir(cwd, filepath.Join(dir, "data")) {
			return verdict{kind: leaveAlone, why: fmt.Sprintf("no owner file, and pid %d of its postmaster.pid may be its server", pid)}
		}
	}
	return verdict{kind: orphaned, why: "no owner file, older than " + ownerlessGrace.String() + ", nothing running"}
}

// isClusterEntry reports whether name is one learn puts in a cluster
// directory (see cluster).
func isClusterEntry(name string) bool {
	switch {
	case name == "data", name == socketName, name == socketName+".lock",
		name == ownerFile, strings.HasPrefix(name, ownerFile+".tmp-"):
		return true
	}
	return false
}

// removeOrphan stops what still runs of an orphaned cluster and removes it.
// skip is not empty when the cluster turned out to be in use after all.
func removeOrphan(dir string, v verdict, run runner) (rc ReapedCluster, skip string, err error) {
	rc = ReapedCluster{Dir: dir, LearnPID: v.own.learnPID, Why: v.why}
	data := filepath.Join(dir, "data")
	if pid := orphanPostmaster(v.own, data); pid > 0 {
		stopOrphanPostmaster(pid)
		rc.StoppedPostmaster = true
	}
	if socketAnswers(dir) {
		return rc, "its learn is gone but a server still answers on its socket, and learn cannot tell which process it is", nil
	}
	// The owner file is learn's own (readOwner trusts no other), so the
	// postmaster pid it names is the one the segment's creator must be.
	if removed, err := releaseSharedMemory(data, run.uid, v.own.pmPID); err != nil {
		return rc, "", fmt.Errorf("could not remove the shared memory of the orphaned cluster in %s: %w", dir, err)
	} else {
		rc.RemovedSharedMemory = removed
	}
	if err := removeAll(dir); err != nil {
		return rc, "", fmt.Errorf("could not remove the orphaned cluster in %s: %w; remove it by hand", dir, err)
	}
	return rc, "", nil
}

// orphanPostmaster returns the pid of the orphaned cluster's postmaster if
// it still runs and provably is that postmaster, else 0: the pid the owner
// file names with the same start time, or the pid in postmaster.pid when its
// working directory is the data directory (PostgreSQL processes chdir there;
// this covers a postmaster the owner file does not name yet).
func orphanPostmaster(o owner, data string) int {
	if o.pmPID > 0 && sameProcess(o.pmPID, o.pmTicks) {
		return o.pmPID
	}
	if pid, _, _ := readPidFile(data); pid > 0 && pidExists(pid) {
		cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if err == nil && sameDir(cwd, data) {
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
	ticks := startTicks(pid)
	alive := func() bool {
		if ticks == "" {
			return pidExists(pid)
		}
		return sameProcess(pid, ticks)
	}
	syscall.Kill(pid, syscall.SIGQUIT)
	if waitUntil(orphanQuitWait, func() bool { return !alive() }) {
		return
	}
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		syscall.Kill(-pid, syscall.SIGKILL)
	} else {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	waitUntil(2*time.Second, func() bool { return !alive() })
	waitGroupGone(pid, 500*time.Millisecond)
}

// waitUntil polls cond every 10 ms for up to d and reports whether it held.
func waitUntil(d time.Duration, cond func() bool) bool {
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

// socketAnswers reports whether a server accepts connections on the
// cluster's Unix socket.
func socketAnswers(dir string) bool {
	conn, err := net.DialTimeout("unix", filepath.Join(dir, socketName), 500*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// readPidFile reads the data directory's postmaster.pid: line 1 is the pid
// of the postmaster (negative for a standalone backend, as initdb runs),
// line 7 the System V shared memory key and id ("  9985008    688164").
// Missing parts are 0.
func readPidFile(data string) (pid int, shmKey, shmID int64) {
	raw, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0, 0, 0
	}
	lines := strings.Split(string(raw), "\n")
	pid, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	if pid < 0 {
		pid = -pid
	}
	if len(lines) >= 7 {
		if f := strings.Fields(lines[6]); len(f) == 2 {
			shmKey, _ = strconv.ParseInt(f[0], 10, 64)
			shmID, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return pid, shmKey, shmID
}

// sameDir reports whether the resolved path cwd (from /proc/<pid>/cwd) is
// the directory dir, whose path may go through symbolic links.
func sameDir(cwd, dir string) bool {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return cwd == dir
}

// fileUID returns the owner of a file.
func fileUID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
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

// ReapAll removes what learn processes killed outright left, every way they
// may have left it: local clusters (Reap), Docker containers (ReapDocker)
// when a Docker daemon answers, and schemas in the user's database
// (ReapSchemas) when opts names one learn would use: opts.DatabaseURL is
// set and opts.Mode is Auto or URL (with Local or Docker forced, learn never
// connects to it). It never touches what a live learn uses. A way that is
// absent here (no Docker daemon, no URL) is not an error. logf, when not
// nil, gets one line per thing removed. The error joins the failures of
// each way, or is ctx's error when ctx ends; the parent that supervises
// learn runs it after a crash.
func ReapAll(ctx context.Context, opts Options, logf func(format string, args ...any)) error {
	_, errLocal := Reap(ctx, logf)
	_, errDocker := ReapDocker(ctx, logf)
	if errors.Is(errDocker, ErrNoDocker) {
		errDocker = nil // no daemon: no container of learn's either
	}
	var errURL error
	if opts.DatabaseURL != "" && (opts.Mode == "" || opts.Mode == Auto || opts.Mode == URL) {
		_, errURL = ReapSchemas(ctx, opts.DatabaseURL, logf)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errLocal, errDocker, errURL)
}
