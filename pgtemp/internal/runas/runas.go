// Package runas is the operating-system user learn's PostgreSQL programs
// run as ([Runner], from [Current]): learn's own user, or, when learn runs
// as root (PostgreSQL refuses to), the user postgres or nobody. It says how
// every program starts ([Runner.SysProcAttr]: that user, a process group of
// its own, a signal when learn dies) and whether that user can reach a
// directory ([Runner.CanReach]).
package runas

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Runner is the operating-system user the local cluster runs as. PostgreSQL
// refuses to run as root, so when learn runs as root the cluster runs as the
// user postgres, or nobody when there is no such user. Otherwise it runs as
// learn's own user and no credentials change.
type Runner struct {
	UID, GID int
	Name     string
	Cred     *syscall.Credential // nil when the cluster runs as learn's user
}

// Current is the runner for this process.
func Current() (Runner, error) {
	if os.Geteuid() != 0 {
		r := Runner{UID: os.Geteuid(), GID: os.Getegid(), Name: strconv.Itoa(os.Geteuid())}
		if u, err := user.Current(); err == nil {
			r.Name = u.Username
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
		return Runner{
			UID: uid, GID: gid, Name: name,
			Cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
		}, nil
	}
	return Runner{}, errors.New("learn runs as root, PostgreSQL refuses to, and there is neither a user postgres nor nobody to run it as: run learn as a normal user or create a user named postgres")
}

// SysProcAttr is how every PostgreSQL program starts: as the runner, in a
// process group of its own (a Ctrl-C in the terminal reaches learn, which
// decides when the cluster stops) and sent deathSig when learn dies.
func (r Runner) SysProcAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Credential: r.Cred, Setpgid: true}
	setDeathSignal(attr, deathSig)
	return attr
}

// CanReach reports whether the runner can enter every directory on the way
// to dir (the runner is learn's own user, or the directories let others in).
func (r Runner) CanReach(dir string) bool {
	if r.Cred == nil {
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
		case ok && int(st.Uid) == r.UID:
			if mode&0o100 == 0 {
				return false
			}
		case ok && int(st.Gid) == r.GID:
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

func (r Runner) String() string {
	return fmt.Sprintf("%s (uid %d)", r.Name, r.UID)
}
