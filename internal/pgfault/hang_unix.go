//go:build unix

package pgfault

import (
	"syscall"
	"testing"
)

// Hang stops the processes pids (SIGSTOP): a PostgreSQL that hangs, as
// kill -STOP makes one, neither answering nor closing a connection. Each
// is killed (SIGKILL) when t ends, whatever the test found, so nothing
// stays stopped.
func Hang(t testing.TB, pids ...int) {
	t.Helper()
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	for _, p := range pids {
		if err := syscall.Kill(p, syscall.SIGSTOP); err != nil {
			t.Fatalf("stop process %d: %v", p, err)
		}
	}
}
