package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// shmHelper makes the test binary a stand-in for initdb's bootstrap
// backend: it creates the POSIX shared memory file it is given, maps it,
// says so on standard output, and waits to be killed.
const shmHelper = "LEARN_PROC_SHM_HELPER"

func TestMain(m *testing.M) {
	if f := os.Getenv(shmHelper); f != "" {
		os.Exit(holdShm(f))
	}
	os.Exit(m.Run())
}

func holdShm(name string) int {
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if err := unix.Ftruncate(fd, 4096); err != nil {
		fmt.Println(err)
		return 1
	}
	if _, err := unix.Mmap(fd, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("mapped")
	select {}
}

// A process group that SIGKILL ends leaves no POSIX shared memory that
// it mapped (the kernel would keep it until the machine restarts), and
// KillGroup removes nothing the group did not map.
func TestKillGroupRemovesTheSharedMemoryItMapped(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm")
	}
	name := fmt.Sprintf("/dev/shm/PostgreSQL.learn-test-%d", os.Getpid())
	other := name + "-other"
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(name); os.Remove(other) })

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), shmHelper+"="+name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "mapped\n" {
		p.Kill()
		t.Fatalf("helper said %q, %v", line, err)
	}
	p.Kill()
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("%s is left after the group was killed (%v)", filepath.Base(name), err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file the group did not map was removed: %v", err)
	}
}
