//go:build !unix

package supervisor

import (
	"context"
	"os"
	"os/exec"

	"github.com/charmbracelet/x/term"
)

// EnvJobs is unused where there is no job control.
const EnvJobs = "LEARN_JOBS"

// parentJobs is empty where there is no job control.
type parentJobs struct{}

func startJobs(*exec.Cmd) *parentJobs       { return nil }
func (*parentJobs) run(Config, *term.State) {}
func (*parentJobs) close()                  {}

// HandleJobControl does nothing where there is no job control.
func HandleJobControl() {}

// CanSuspend is false where there is no job control.
func CanSuspend() bool { return false }

// SuspendHandler does nothing where there is no job control.
func SuspendHandler(func()) {}

// Suspend returns false where there is no job control.
func Suspend(context.Context) bool { return false }
