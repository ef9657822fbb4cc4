//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sim

import "github.com/jackc/pgx/v5"

// quietDial leaves cfg's connections as pgx makes them: the raw reads and
// writes of quietConn are Unix system calls.
func quietDial(*pgx.ConnConfig) {}
