package pgtemp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ownerFile records who made a cluster directory, so that a later run of
// learn can tell the cluster of a learn process that was killed (its
// process gone, or its pid reused by a process with another start time)
// from one in use, and reap it.
const ownerFile = "learn.owner"

var processStart = time.Now()

// writeOwner writes <dir>/learn.owner:
//
//	learn_pid=<pid of learn>
//	learn_start_ticks=<field 22 of /proc/<pid>/stat, when there is a /proc>
//	learn_started=<RFC 3339 time this package was initialised>
//	postmaster_pid=<pid>
//	postmaster_start_ticks=<…>
func writeOwner(dir string, postmasterPID int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "learn_pid=%d\n", os.Getpid())
	if t := startTicks(os.Getpid()); t != "" {
		fmt.Fprintf(&b, "learn_start_ticks=%s\n", t)
	}
	fmt.Fprintf(&b, "learn_started=%s\n", processStart.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "postmaster_pid=%d\n", postmasterPID)
	if t := startTicks(postmasterPID); t != "" {
		fmt.Fprintf(&b, "postmaster_start_ticks=%s\n", t)
	}
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(b.String()), 0o600)
}

// startTicks returns a process's start time in clock ticks after boot from
// /proc/<pid>/stat, or "" where there is no /proc.
func startTicks(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) may contain spaces; fields after it don't.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return ""
	}
	return fields[19] // field 22 overall
}
