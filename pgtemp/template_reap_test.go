//go:build linux

package pgtemp

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/pgtemp/internal/runas"
	"github.com/learn-idempotency/learn/pgtemp/internal/template"
	"golang.org/x/sys/unix"
)

// templateHelper makes the helper process (helperProcess) a learn in the
// middle of saving the template named after it: it begins the copy as
// saveTemplate does, writes 5 MB into it, prints the copy's directory and
// waits to be killed.
const templateHelper = "template-writer:"

func templateWriter(tmpl string) int {
	tmp, release, err := template.NewCopy(tmpl)
	if err == nil {
		defer release() // never runs; keeps the lock's file from the finalizer

		err = os.MkdirAll(filepath.Join(tmp, "base", "1"), 0o700)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, "base", "1", "1259"), make([]byte, 5<<20), 0o600)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("copy:", tmp)
	select {}
}

// startTemplateWriter starts templateWriter for tmpl and returns it with
// the directory of its copy; the test's cleanup kills it.
func startTemplateWriter(t *testing.T, tmpl string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+templateHelper+tmpl)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "copy: ") {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	return cmd, strings.TrimSpace(strings.TrimPrefix(line, "copy: "))
}

// The user's report: a learn killed (kill -9) while it copied the cluster
// template into ~/.cache/learn left pg-template-*.tmp-* there (5 to 22 MB),
// and only the next template save removed it, an hour later at the
// earliest; a warm start never saves one. Now the next run removes it, but
// only once its writer is proven gone: while the writer lives, neither a
// start that saves a template nor one that copies it touches the copy.
func TestInterruptedTemplateCopyIsRemovedByTheNextRun(t *testing.T) {
	t.Parallel()
	bin := needLocal(t)
	run, err := runas.Current()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	tmpl := template.Path(cache, bin.Major, run.UID)
	writer, copy := startTemplateWriter(t, tmpl)

	// A cold start, which saves the template, and then a warm one, while
	// the writer lives: its copy is being made, and stays.
	for _, want := range []string{"cold", "warm"} {
		s := startT(t, isolated(t, cache))
		if got := map[bool]string{true: "cold", false: "warm"}[s.RanInitdb()]; got != want {
			t.Errorf("a %s start, want %s", got, want)
		}
		s.Close()
		if _, err := os.Stat(filepath.Join(copy, "base", "1", "1259")); err != nil {
			t.Fatalf("a %s start removed the copy of a learn that still runs: %v", want, err)
		}
	}

	writer.Process.Kill() // SIGKILL: no chance to remove its copy
	writer.Wait()

	var lines []string
	opts := isolated(t, cache)
	opts.Logf = func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	s := startT(t, opts)
	if s.RanInitdb() {
		t.Errorf("the next start ran initdb: the template should be warm")
	}
	if _, err := os.Stat(copy); err == nil {
		t.Errorf("the next start left the interrupted copy %s", copy)
	}
	said := strings.Join(lines, "\n")
	if !strings.Contains(said, "removed an interrupted copy of the cluster template, "+copy+" (5.2 MB)") {
		t.Errorf("the next start did not say what it removed:\n%s", said)
	}
	if !template.Usable(tmpl, bin.Major) {
		t.Errorf("the template itself is gone")
	}
}

// TestReapTemplateCopiesWaitsForTheLock: a copy is removed only by whoever
// gets the templates' lock exclusively, which no save under way allows;
// what another user owns is never removed, and with nothing to remove no
// lock file is made.
func TestReapTemplateCopiesWaitsForTheLock(t *testing.T) {
	root := t.TempDir()
	if got, err := template.ReapCopies(root, nil); got != nil || err != nil {
		t.Fatalf("an empty cache: %v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(root, template.LockFile)); err == nil {
		t.Errorf("a lock file was made with nothing to remove")
	}

	tmp, release, err := template.NewCopy(filepath.Join(root, "pg-template-15-1000"))
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(root, "pg-template-15-1000.old-1-2")
	mkdirs(t, old)
	if got, _ := template.ReapCopies(root, nil); len(got) != 0 {
		t.Errorf("with a save under way, removed %v", got)
	}
	release()
	got, err := template.ReapCopies(root, nil)
	if err != nil || len(got) != 2 {
		t.Errorf("with no save under way: removed %v, %v; want %s and %s", got, err, tmp, old)
	}
	for _, d := range []string{tmp, old} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s is still there", d)
		}
	}

	if os.Geteuid() == 0 {
		theirs := filepath.Join(root, "pg-template-15-1000.tmp-theirs")
		mkdirs(t, theirs)
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if got, _ := template.ReapCopies(root, nil); len(got) != 0 {
			t.Errorf("removed another user's directory: %v", got)
		}
	}
	// The lock is really flock: taken exclusively elsewhere, a save waits.
	other, err := template.Lock(root, unix.LOCK_EX|unix.LOCK_NB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := template.Lock(root, unix.LOCK_SH|unix.LOCK_NB); err == nil {
		t.Errorf("a shared lock was granted while another holds it exclusively")
	}
	other()
}
