//go:build !linux

package main

import (
	"testing"
	"time"

	"github.com/learn-idempotency/learn/internal/uitest"
)

// waitExit returns at once: the end-to-end tests read processes in /proc,
// which only Linux has, so they find none to wait for.
func waitExit(t testing.TB, pids []int) {}

// fileWatch reads a directory again every tenth of a second: without
// inotify, nothing here says when its files change.
type fileWatch struct{}

func watchDir(t testing.TB, dir string) *fileWatch { return &fileWatch{} }

// until returns once ok holds, checking it every tenth of a second; it
// fails with failure's words shortly before the test binary's -timeout.
func (w *fileWatch) until(t *testing.T, ok func() bool, failure func() string) {
	t.Helper()
	guard, stop := uitest.Guard(t)
	defer stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		select {
		case <-tick.C:
		case <-guard:
			t.Fatal(failure())
		}
	}
}
