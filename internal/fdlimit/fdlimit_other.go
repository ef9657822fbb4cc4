//go:build !unix

package fdlimit

// Limit cannot be read here.
func Limit() (int, bool) { return 0, false }

// Open cannot be read here.
func Open() (int, bool) { return 0, false }
