//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sim

import "net"

// closedByServer cannot peek here; pgx's own ping of a connection idle for
// a second is what checks it.
func closedByServer(net.Conn) bool { return false }
