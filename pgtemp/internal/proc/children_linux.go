package proc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ChildPIDs returns the processes whose parent is pid.
func ChildPIDs(pid int) []int { return pidsWhere(1, pid) }

// GroupPIDs returns the processes of process group pgid.
func GroupPIDs(pgid int) []int { return pidsWhere(2, pgid) }

// pidsWhere returns the processes whose field i after the command in
// /proc/*/stat (state 0, ppid 1, pgrp 2, …; the command, in parentheses,
// may itself hold spaces and parentheses) is v. A process that ends
// meanwhile is skipped.
func pidsWhere(i, v int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		end := bytes.LastIndexByte(b, ')')
		if end < 0 {
			continue
		}
		fields := bytes.Fields(b[end+1:])
		if len(fields) <= i {
			continue
		}
		if n, err := strconv.Atoi(string(fields[i])); err == nil && n == v {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// MappedShm returns the PostgreSQL POSIX shared memory files
// (/dev/shm/PostgreSQL.*) that any of pids maps, from /proc/PID/maps.
func MappedShm(pids []int) []string {
	var files []string
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
		if err != nil {
			continue
		}
		for line := range bytes.Lines(b) {
			fields := bytes.Fields(line)
			if len(fields) < 6 {
				continue
			}
			f := string(fields[5])
			if strings.HasPrefix(f, "/dev/shm/PostgreSQL.") && !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files
}

// WaitEnded waits up to d until every one of pids has ended (gone, or a
// zombie waiting to be reaped): SIGKILL ends a process asynchronously, and
// Close promises that nothing of the cluster runs once it returns. The
// kernel says when each ends through a pidfd (Linux 5.3), which a process
// that is not learn's child can be waited on with; where pidfd_open is
// refused (an older kernel, a sandbox), /proc/PID/stat is polled.
func WaitEnded(pids []int, d time.Duration) {
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		switch {
		case err == nil:
			waitReadable(fd, deadline)
			unix.Close(fd)
		case errors.Is(err, unix.ESRCH):
			// gone already
		default:
			for Running(pid) && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond) // no pidfd: nothing else tells a non-parent when a process ends
			}
		}
	}
}

// waitReadable waits until fd is readable (a pidfd: its process ended) or
// the deadline passes.
func waitReadable(fd int, deadline time.Time) {
	for {
		ms := int(time.Until(deadline).Milliseconds())
		if ms <= 0 {
			return
		}
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// Running reports whether pid is a process that has not ended: not gone,
// and not a zombie (whose state, after the command's closing parenthesis
// in /proc/PID/stat, is Z, or X while it is reaped).
func Running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// ProcessesIn returns the processes of user uid whose working directory is
// dir: a PostgreSQL server's processes all work in its data directory, so
// these are the backends a killed postmaster left, and nobody else's. A
// process that ends meanwhile is skipped.
func ProcessesIn(dir string, uid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, p := range stats {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
			continue
		}
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		if err != nil || !SameDir(cwd, dir) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(p)); err == nil && Running(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
