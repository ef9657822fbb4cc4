package shm

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// Release removes the System V shared memory segment of the
// cluster in data, once none of its processes runs. PostgreSQL keeps all its
// shared memory in anonymous mappings (and, with
// dynamic_shared_memory_type=mmap, files in the data directory) except one
// small System V segment it uses as an interlock; a postmaster or initdb
// that stops normally or by SIGQUIT removes it, one that is SIGKILLed
// leaves it, and the kernel keeps it until it is removed or the machine
// restarts.
//
// postmaster.pid is written by the cluster user, so what it says proves
// nothing: a segment is removed only when it is provably the cluster's own.
// Its owner must be uid, the cluster user (never learn's own user when that
// differs: learn as root must not remove root's segments), and either
//   - its creator is pmPID, the postmaster learn started (the segment
//     line 7 of postmaster.pid names), or
//   - its key is the data directory's inode number (PostgreSQL's first
//     choice of key, and initdb's) and nothing is attached to it.
//
// removed is false when there was none such.
func Release(data string, uid, pmPID int) (removed bool, err error) {
	var ids []int
	if _, key, id := ReadPidFile(data); pmPID > 0 && key != 0 && id != 0 {
		if desc, ok := shmStat(int(id)); ok && uint32(desc.Perm.Key) == uint32(key) &&
			int(desc.Perm.Uid) == uid && int(desc.Cpid) == pmPID {
			ids = append(ids, int(id))
		}
	}
	if fi, err := os.Lstat(data); err == nil && fi.IsDir() {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			key := int(int32(st.Ino)) // key_t is an int; PostgreSQL truncates the inode
			if sid, err := unix.SysvShmGet(key, 0, 0); key != 0 && err == nil && !slices.Contains(ids, sid) {
				if desc, ok := shmStat(sid); ok && uint32(desc.Perm.Key) == uint32(key) && int(desc.Perm.Uid) == uid && desc.Nattch == 0 {
					ids = append(ids, sid)
				}
			}
		}
	}
	for _, id := range ids {
		if _, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EIDRM) {
			return removed, fmt.Errorf("shmctl(%d, IPC_RMID): %w", id, err)
		}
		removed = true
	}
	return removed, nil
}

// shmStat reads a segment's owner, creator and key; ok is false when it is
// gone (EINVAL) or not visible to learn.
func shmStat(id int) (unix.SysvShmDesc, bool) {
	var desc unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &desc); err != nil {
		return desc, false
	}
	return desc, true
}
