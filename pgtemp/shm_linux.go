package pgtemp

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// releaseSharedMemory removes the System V shared memory segment of the
// cluster in data, once none of its processes runs. PostgreSQL keeps all its
// shared memory in anonymous mappings (and, with
// dynamic_shared_memory_type=mmap, files in the data directory) except one
// small System V segment it uses as an interlock; a postmaster or initdb
// that stops normally or by SIGQUIT removes it, one that is SIGKILLed
// leaves it, and the kernel keeps it until it is removed or the machine
// restarts.
//
// The segment is the one line 7 of postmaster.pid names (PostgreSQL writes
// it there, also for initdb's bootstrap backend); without that line, the
// one whose key is the data directory's inode number (PostgreSQL's first
// choice of key) if nothing is attached to it. Either way it must belong to
// one of uids and have the expected key, so nothing that is not this
// cluster's is ever removed. removed is false when there was none.
func releaseSharedMemory(data string, uids []int) (removed bool, err error) {
	_, key, id := readPidFile(data)
	byPidFile := key != 0 && id != 0
	if !byPidFile {
		fi, err := os.Stat(data)
		if err != nil {
			return false, nil
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return false, nil
		}
		key = int64(int32(st.Ino)) // key_t is an int; PostgreSQL truncates the inode
		if key == 0 {
			return false, nil
		}
		sid, err := unix.SysvShmGet(int(key), 0, 0)
		if err != nil {
			return false, nil // no segment with this key
		}
		id = int64(sid)
	}
	var desc unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(int(id), unix.IPC_STAT, &desc); err != nil {
		return false, nil // already gone (EINVAL), or not visible to us
	}
	if uint32(desc.Perm.Key) != uint32(key) || !slices.Contains(uids, int(desc.Perm.Uid)) {
		return false, nil
	}
	if !byPidFile && desc.Nattch != 0 {
		return false, nil
	}
	if _, err := unix.SysvShmCtl(int(id), unix.IPC_RMID, nil); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EIDRM) {
		return false, fmt.Errorf("shmctl(%d, IPC_RMID): %w", id, err)
	}
	return true, nil
}
