//go:build unix

package fdlimit

import (
	"math"
	"os"
	"syscall"
)

// Limit is the soft RLIMIT_NOFILE; ok is false when it cannot be read.
func Limit() (n int, ok bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	if rl.Cur > math.MaxInt32 {
		return math.MaxInt32, true
	}
	return int(rl.Cur), true
}

// Open is how many files learn has open now, where /proc or /dev/fd lists
// them; ok is false elsewhere.
func Open() (n int, ok bool) {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		f, err := os.Open(dir)
		if err != nil {
			continue
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err == nil {
			return len(names) - 1, true // less the directory's own
		}
	}
	return 0, false
}
