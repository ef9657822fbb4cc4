//go:build !unix

package progress

// openNonblock is 0 where there are no named pipes in the file system to
// wait on (Windows, Plan 9, js, wasip1).
const openNonblock = 0
