package workshop

import "golang.org/x/sys/unix"

// inqRequest is the ioctl that says how many received bytes a socket
// holds unread.
const inqRequest = unix.SIOCINQ
