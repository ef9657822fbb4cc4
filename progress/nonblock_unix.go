//go:build unix

package progress

import "syscall"

// openNonblock opens the progress file without waiting: a named pipe in
// its place would otherwise block open(2) until a writer came.
const openNonblock = syscall.O_NONBLOCK
