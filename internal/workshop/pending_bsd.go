//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package workshop

// inqRequest is FIONREAD (_IOR('f', 127, int)), which x/sys/unix does
// not name on these systems: how many received bytes a socket holds
// unread.
const inqRequest = 0x4004667f
