package pgtemp

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// runner is the operating-system user the local cluster runs as. PostgreSQL
// refuses to run as root, so when learn runs as root the cluster runs as the
// user postgres, or nobody when there is no such user. Otherwise it runs as
// learn's own user and no credentials change.
type runner struct {
	uid, gid int
	name     string
	cred     *syscall.Credential // nil when the cluster runs as learn's user
}

func currentRunner() (runner, error) {
	if os.Geteuid() != 0 {
		r := runner{uid: os.Geteuid(), gid: os.Getegid(), name: strconv.Itoa(os.Geteuid())}
		if u, err := user.Current(); err == nil {
			r.name = u.Username
		}
		return r, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return runner{
			uid: uid, gid: gid, name: name,
			cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
		}, nil
	}
	return runner{}, errors.New("learn runs as root, PostgreSQL refuses to, and there is neither a user postgres nor nobody to run it as: run learn as a normal user or create a user named postgres")
}

// sysProcAttr is how every PostgreSQL program starts: as the runner, in a
// process group of its own (a Ctrl-C in the terminal reaches learn, which
// decides when the cluster stops) and sent deathSig when learn dies.
func (r runner) sysProcAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Credential: r.cred, Setpgid: true}
	setDeathSignal(attr, deathSig)
	return attr
}

// canReach reports whether the runner can enter every directory on the way
// to dir (the runner is learn's own user, or the directories let others in).
func (r runner) canReach(dir string) bool {
	if r.cred == nil {
		return true
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		switch {
		case ok && int(st.Uid) == r.uid:
			if mode&0o100 == 0 {
				return false
			}
		case ok && int(st.Gid) == r.gid:
			if mode&0o010 == 0 {
				return false
			}
		default:
			if mode&0o001 == 0 {
				return false
			}
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

func (r runner) String() string {
	return fmt.Sprintf("%s (uid %d)", r.name, r.uid)
}
