//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package progress

// syncDir is a no-op: Windows cannot fsync a directory, and its rename
// (MoveFileEx) is durable once it returns; elsewhere fsync of a directory
// is not known to work.
func syncDir(string) error { return nil }
