package pgtemp

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// childPIDs returns the processes whose parent is pid, from /proc/*/stat
// (the fourth field, after the command's closing parenthesis, which may
// itself hold spaces and parentheses). A process that ends meanwhile is
// skipped.
func childPIDs(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(b[i+1:]) // state, ppid, …
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(string(fields[1])); err == nil && ppid == pid {
			if c, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				kids = append(kids, c)
			}
		}
	}
	return kids
}
