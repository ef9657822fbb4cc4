// Package shm removes the System V shared memory segment a PostgreSQL
// cluster leaves when its postmaster (or initdb) was killed ([Release],
// Linux only), and reads the data directory's postmaster.pid
// ([ReadPidFile]), which names that segment and the postmaster.
package shm

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadPidFile reads the data directory's postmaster.pid: line 1 is the pid
// of the postmaster (negative for a standalone backend, as initdb runs),
// line 7 the System V shared memory key and id ("  9985008    688164").
// Missing parts are 0.
func ReadPidFile(data string) (pid int, shmKey, shmID int64) {
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
