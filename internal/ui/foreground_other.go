//go:build !unix

package ui

import (
	"context"
	"os"
)

// waitForeground has nothing to wait for where there are no process groups.
func waitForeground(context.Context, *os.File) error { return nil }
