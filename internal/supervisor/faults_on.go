//go:build learnfaults

package supervisor

import (
	"os"
	"time"
)

// FaultHooks says whether this build has the fault hooks of the tests
// (the learnfaults build tag).
const FaultHooks = true

// InjectCrash panics in a goroutine of its own after the duration in
// LEARN_CRASH_AFTER (EnvCrashAfter), when it holds one: a crash no recover
// in learn can catch, for the crash tests. Without it, it does nothing.
func InjectCrash() {
	if d, err := time.ParseDuration(os.Getenv(EnvCrashAfter)); err == nil {
		crashAfter(d, EnvCrashAfter+"="+d.String())
	}
}

// InjectSlowStart waits the duration in LEARN_SLOW_START (EnvSlowStart),
// when the child holds one. Without it, or in the parent, it returns at
// once. Before it waits it writes a line to the file that
// LEARN_SLOW_START_READY names, when set (a test's FIFO, opened for
// reading): the child is called after HandleJobControl, so from that line
// on both of learn's processes catch SIGTSTP.
func InjectSlowStart() {
	if d, err := time.ParseDuration(os.Getenv(EnvSlowStart)); err == nil && IsChild() {
		if ready := os.Getenv("LEARN_SLOW_START_READY"); ready != "" {
			if f, err := os.OpenFile(ready, os.O_WRONLY|os.O_APPEND, 0); err == nil {
				_, _ = f.WriteString("waiting\n")
				_ = f.Close()
			}
		}
		time.Sleep(d)
	}
}
