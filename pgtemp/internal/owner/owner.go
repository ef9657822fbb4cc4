// Package owner records which learn process made something (a cluster
// directory, a container, a schema) and tells, later, whether that process
// is gone: the rules every reaper of pgtemp goes by.
//
//   - A process is named by its pid, its start time (clock ticks after
//     boot, from /proc) and the boot id: [Record.LearnGone] says gone only
//     when the pid does not exist, the machine rebooted, or the pid now
//     belongs to a process that started at another time.
//   - A cluster directory holds the [File] learn.owner ([Write], [Read]).
//   - A schema's comment holds a [Schema] record ([ThisSchema],
//     [ParseSchema], [Schema.Gone]).
//   - [FileUID] says who owns a file.
package owner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// File records who made a cluster directory, so that a later run of
// learn can tell the cluster of a learn process that was killed (its
// process gone, or its pid reused by a process with another start time)
// from one in use, and reap it (package reap).
const File = "learn.owner"

var processStart = time.Now()

// owner is the content of a learn.owner file.
type Record struct {
	LearnPID   int
	LearnTicks string // "" where there is no /proc
	BootID     string // "" where there is no /proc
	PMPID      int    // 0 until the postmaster runs
	PMTicks    string
}

// Write writes <dir>/learn.owner, replacing it whole (a reader sees the
// old file or the new one, never half of one):
//
//	learn_pid=<pid of learn>
//	learn_start_ticks=<field 22 of /proc/<pid>/stat, when there is a /proc>
//	boot_id=</proc/sys/kernel/random/boot_id, when there is one>
//	learn_started=<RFC 3339 time this package was initialised>
//	postmaster_pid=<pid>            (once the postmaster runs)
//	postmaster_start_ticks=<…>      (idem, when there is a /proc)
//
// learn writes it with postmasterPID 0 right after creating the directory,
// before initdb or the template copy, so that no directory of a live learn
// ever lacks one for more than an instant, and again once the postmaster runs.
func Write(dir string, postmasterPID int) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return WriteIn(r, postmasterPID)
}

// WriteIn is Write through a handle on the directory: the file is
// created new (O_EXCL, so no link planted in its place is followed) and
// renamed into place inside the directory, whatever it has been renamed to
// or replaced with since it was opened.
func WriteIn(dir *os.Root, postmasterPID int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "learn_pid=%d\n", os.Getpid())
	if t := StartTicks(os.Getpid()); t != "" {
		fmt.Fprintf(&b, "learn_start_ticks=%s\n", t)
	}
	if id := BootID(); id != "" {
		fmt.Fprintf(&b, "boot_id=%s\n", id)
	}
	fmt.Fprintf(&b, "learn_started=%s\n", processStart.UTC().Format(time.RFC3339Nano))
	if postmasterPID > 0 {
		fmt.Fprintf(&b, "postmaster_pid=%d\n", postmasterPID)
		if t := StartTicks(postmasterPID); t != "" {
			fmt.Fprintf(&b, "postmaster_start_ticks=%s\n", t)
		}
	}
	tmp := fmt.Sprintf("%s.tmp-%d-%d", File, os.Getpid(), time.Now().UnixNano())
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.Rename(tmp, File)
	}
	if err != nil {
		dir.Remove(tmp)
	}
	return err
}

// ErrNoOwner is Read's error for a file without a learn_pid.
var ErrNoOwner = errors.New("no learn_pid in the owner file")

// Read reads <dir>/learn.owner. It fails when the file is missing
// (fs.ErrNotExist), is not a regular file written by this user (learn as
// root only trusts root's files: a forged one must not make it signal a
// process), or names no learn process.
func Read(dir string) (Record, error) {
	path := filepath.Join(dir, File)
	fi, err := os.Lstat(path)
	if err != nil {
		return Record{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || (ok && int(st.Uid) != os.Geteuid()) {
		return Record{}, fmt.Errorf("%s is not a file learn wrote as this user", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	var o Record
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "learn_pid":
			o.LearnPID, _ = strconv.Atoi(v)
		case "learn_start_ticks":
			o.LearnTicks = v
		case "boot_id":
			o.BootID = v
		case "postmaster_pid":
			o.PMPID, _ = strconv.Atoi(v)
		case "postmaster_start_ticks":
			o.PMTicks = v
		}
	}
	if o.LearnPID <= 0 {
		return Record{}, ErrNoOwner
	}
	return o, nil
}

// learnGone reports whether the learn process that wrote o is gone, and
// why. It errs on the side of alive: only a pid that does not exist, a
// machine that rebooted since, or a pid whose start time differs from the
// recorded one (the pid was reused) count as gone. Where there is no /proc
// to read start times from, a live pid counts as alive.
func (o Record) LearnGone() (bool, string) {
	if o.BootID != "" {
		if id := BootID(); id != "" && id != o.BootID {
			return true, fmt.Sprintf("learn pid %d ran before the machine restarted", o.LearnPID)
		}
	}
	if !PIDExists(o.LearnPID) {
		return true, fmt.Sprintf("learn pid %d is gone", o.LearnPID)
	}
	if o.LearnTicks != "" {
		if t := StartTicks(o.LearnPID); t != "" && t != o.LearnTicks {
			return true, fmt.Sprintf("learn pid %d is gone (the pid now belongs to another process)", o.LearnPID)
		}
	}
	return false, ""
}

// PIDExists reports whether a process (not a zombie) has this pid. A
// process of another user counts (EPERM).
func PIDExists(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return ProcState(pid) != "Z"
}

// SameProcess reports whether pid is still the process that had the start
// time ticks, and not a zombie. Without ticks it cannot tell, and says no.
func SameProcess(pid int, ticks string) bool {
	return ticks != "" && pid > 0 && StartTicks(pid) == ticks && ProcState(pid) != "Z"
}

// StartTicks returns a process's start time in clock ticks after boot from
// /proc/<pid>/stat, or "" where there is no /proc or no such process.
func StartTicks(pid int) string {
	if f := statFields(pid); len(f) >= 20 {
		return f[19] // field 22 overall
	}
	return ""
}

// ProcState returns a process's state letter (R, S, D, Z…) from
// /proc/<pid>/stat, or "" when it cannot be read.
func ProcState(pid int) string {
	if f := statFields(pid); len(f) > 0 {
		return f[0]
	}
	return ""
}

// statFields returns the fields of /proc/<pid>/stat after the command name
// (field 3 onwards), or nil.
func statFields(pid int) []string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// The command name (field 2) may contain spaces; fields after it don't.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(stat[i+1:]))
}

// bootID identifies this boot of the machine ("" where there is no /proc):
// pids and start ticks only mean something within one boot.
func BootID() string {
	id, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(id))
}

// Schemas: a schema learn_<hex> in a user's database (URL mode) outlives a
// learn process that was killed outright just as a cluster directory does,
// so NewSchema records its owner in the schema's comment, in the same
// transaction that creates it, and ReapSchemas (package dburl) drops the
// schemas whose owner is provably gone.

// SchemaPrefix starts the comment learn puts on every schema it makes;
// a JSON Schema follows it.
const SchemaPrefix = "learn owner: "

// Schema is the owner record in a schema's comment, e.g.
//
//	learn owner: {"pid":1234,"start_ticks":"5678","boot_id":"0f3c…","pid_ns":"pid:[4026531836]","host":"laptop","created":"2026-05-20T14:38:24Z"}
//
// start_ticks, boot_id and pid_ns are left out where there is no /proc.
type Schema struct {
	PID     int    `json:"pid"`
	Ticks   string `json:"start_ticks,omitempty"`
	BootID  string `json:"boot_id,omitempty"`
	PIDNS   string `json:"pid_ns,omitempty"`
	Host    string `json:"host"`
	Created string `json:"created"`
}

// ThisSchema describes this process as the owner of a schema made now.
func ThisSchema() Schema {
	host, _ := os.Hostname()
	return Schema{
		PID:     os.Getpid(),
		Ticks:   StartTicks(os.Getpid()),
		BootID:  BootID(),
		PIDNS:   PIDNamespace(),
		Host:    host,
		Created: time.Now().UTC().Format(time.RFC3339),
	}
}

// comment is the schema comment that records o.
func (o Schema) Comment() string {
	b, _ := json.Marshal(o) // strings and an int: cannot fail
	return SchemaPrefix + string(b)
}

// ParseSchema reads a schema comment; ok is false when the comment is
// not one learn wrote (no prefix, not JSON, no pid or no host).
func ParseSchema(comment string) (o Schema, ok bool) {
	raw, found := strings.CutPrefix(comment, SchemaPrefix)
	if !found || json.Unmarshal([]byte(raw), &o) != nil || o.PID <= 0 || o.Host == "" {
		return Schema{}, false
	}
	return o, true
}

// gone reports whether the learn process that made the schema is provably
// gone, and why; otherwise leave says why the schema is left alone ("" when
// its owner is alive). Only an owner on this machine in this boot and pid
// namespace can be judged: a schema made on another host, before a restart,
// where there is no boot id to compare (no /proc), or in another pid
// namespace (a container sharing the host name) is never touched. On this
// machine the owner is gone when its pid does not exist or now belongs to a
// process that started at another time.
func (o Schema) Gone() (gone bool, why, leave string) {
	host, _ := os.Hostname()
	switch {
	case host == "" || o.Host != host:
		return false, "", fmt.Sprintf("%s is not this host, %s", o.Host, host)
	case o.BootID == "":
		return false, "", "it recorded no boot id, so a restart since cannot be ruled out"
	case o.BootID != BootID():
		return false, "", "this machine has restarted since, or it is another machine of the same name"
	case o.PIDNS != PIDNamespace():
		return false, "", "it ran in another pid namespace, a container perhaps"
	}
	gone, why = Record{LearnPID: o.PID, LearnTicks: o.Ticks}.LearnGone()
	return gone, why, ""
}

// String names the owner for people: "made by learn pid 4242 on host
// build-box-7 at 2026-01-02T03:04:05Z".
func (o Schema) String() string {
	s := fmt.Sprintf("made by learn pid %d on host %s", o.PID, o.Host)
	if o.Created != "" {
		s += " at " + o.Created
	}
	return s
}

// PIDNamespace names this process's pid namespace ("pid:[4026531836]"), or
// "" where there is no /proc: pids only mean something within one.
func PIDNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return ns
}

// FileUID returns the owner of a file.
func FileUID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
