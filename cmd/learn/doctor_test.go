package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/pgtemp"
)

// doctorReport runs learn doctor in process and checks what every report holds.
func doctorReport(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t0 := time.Now()
	code, out, errs := runCLI(t, append([]string{"doctor"}, args...)...)
	t.Logf("learn doctor %s: exit %d in %s\n%s%s", strings.Join(args, " "), code, time.Since(t0).Round(time.Millisecond), out, errs)
	if strings.ContainsRune(out+errs, '\x1b') {
		t.Errorf("the report holds an escape sequence")
	}
	for _, want := range []string{"1. database URL", "2. local PostgreSQL binaries", "3. Docker", "learn would use:", "because:", "Leftovers"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	return code, out, errs
}

func TestDoctorWithLocalForced(t *testing.T) {
	code, out, _ := doctorReport(t, "--postgres", "local")
	if _, err := os.Stat("/usr/lib/postgresql"); err != nil && code != 0 {
		t.Skip("no local PostgreSQL binaries here")
	}
	for _, want := range []string{"learn would use: local PostgreSQL binaries", "--postgres local forces it", "works: yes: started in", "SELECT 1", "All is well"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d; the report lacks %q", code, want)
		}
	}
}

func TestDoctorWithAGoodURL(t *testing.T) {
	code, out, _ := doctorReport(t, "--database-url", testDB.ConnString())
	for _, want := range []string{"learn would use: database URL", "--database-url is set, so learn uses it", "from: --database-url"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d; the report lacks %q", code, want)
		}
	}
}

// localWorks reports whether the doctor's report says the local binaries work.
func localWorks(out string) bool {
	_, section, _ := strings.Cut(out, "2. local PostgreSQL binaries")
	section, _, _ = strings.Cut(section, "3. Docker")
	return strings.Contains(section, "works: yes")
}

func TestDoctorWithABadURLSaysWhatToDo(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://learn:hunter22@127.0.0.1:1/nowhere")
	code, out, errs := doctorReport(t)
	if code != 1 || !strings.Contains(errs, "does not work") {
		t.Errorf("exit %d, stderr %q; want 1", code, errs)
	}
	want := []string{"127.0.0.1:1", "DATABASE_URL is set", "url: could not reach the PostgreSQL at 127.0.0.1:1"}
	if localWorks(out) {
		want = append(want, "fix DATABASE_URL, or unset it to let learn use the local binaries, which work")
		if strings.Contains(out, "apt install postgresql") {
			t.Errorf("the report says to install the local binaries, which work")
		}
	} else {
		want = append(want, "fix DATABASE_URL (see 1 above)", "unset DATABASE_URL, and ")
	}
	for _, want := range want {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(out+errs, "hunter22") {
		t.Errorf("the report shows the password")
	}
}

// The user's report: with Docker forced and no daemon, the doctor said to
// install the PostgreSQL server binaries, which were installed and work.
func TestDoctorWithDockerForcedAndNoDaemon(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "docker.sock"))
	code, out, _ := doctorReport(t, "--postgres", "docker")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := []string{"--postgres docker forces it", "no Docker daemon learn can use", "start the Docker daemon", "start Docker (learn then runs"}
	if localWorks(out) {
		want = append(want, "--postgres docker forces Docker, which does not work here; leave it out (or --postgres local) to use the local binaries, which work")
		if strings.Contains(out, "apt install postgresql") {
			t.Errorf("the report says to install the local binaries, which work")
		}
	} else {
		want = append(want, "leave out --postgres docker, and ")
	}
	for _, want := range want {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestDoctorWithDockerForced(t *testing.T) {
	t.Setenv("LEARN_POSTGRES", "docker")
	code, out, _ := doctorReport(t)
	if code != 0 {
		if os.Getenv("LEARN_CI") == "" {
			t.Skip("Docker does not work here (see the report); CI runs this with a daemon and LEARN_POSTGRES_IMAGE")
		}
		t.Fatalf("exit %d under LEARN_CI", code)
	}
	for _, want := range []string{"learn would use: Docker", "LEARN_POSTGRES=docker forces it", "daemon:", pgtemp.DockerImage(), "removes its containers", "works: yes: started in", "All is well"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestPostgresFlagWinsOverTheEnvironment(t *testing.T) {
	t.Setenv("LEARN_POSTGRES", "cloud")
	code, _, errs := runCLI(t, "doctor")
	if code != 2 || !strings.Contains(errs, "LEARN_POSTGRES=cloud") || !strings.Contains(errs, "auto, url, local, docker") {
		t.Errorf("LEARN_POSTGRES=cloud: exit %d, stderr %q", code, errs)
	}
	code, out, _ := runCLI(t, "doctor", "--postgres", "local")
	if code != 0 || !strings.Contains(out, "--postgres local forces it") {
		t.Errorf("--postgres local with LEARN_POSTGRES=cloud: exit %d\n%s", code, out)
	}
}

func TestHelpNamesDoctorAndTheEnvironment(t *testing.T) {
	_, out, _ := runCLI(t, "help")
	for _, want := range []string{"learn doctor", "LEARN_POSTGRES ", "LEARN_POSTGRES_IMAGE", "postgres:17-alpine", "DATABASE_URL"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// serveInURLMode starts the built learn as `learn serve` in the test
// database, supervised (as a user runs it) or as the supervised child
// itself, waits until it is ready, and returns it, the pid of the process
// that holds the database connection, the name of its schema (found by the
// owner record learn puts on it) and its standard error, to read once it
// has ended.
func serveInURLMode(t *testing.T, bin string, supervised bool) (cmd *exec.Cmd, holder int, schema string, stderr *bytes.Buffer) {
	t.Helper()
	cmd = exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--database-url", testDB.ConnString())
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "LEARN_SUPERVISED=")
	if !supervised {
		cmd.Env = append(cmd.Env, "LEARN_SUPERVISED=1") // the child, with no parent to clean up after it
	}
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
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
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "ready;") {
				ready <- true
				break
			}
		}
		ready <- false
		io.Copy(io.Discard, stdout)
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Wait()
			t.Fatalf("learn serve ended before it was ready:\n%s", stderr)
		}
	case <-time.After(time.Minute):
		t.Fatal("learn serve was not ready within a minute")
	}
	holder = cmd.Process.Pid
	if supervised {
		// The child is a child of whichever thread of the parent started it.
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", holder))
		var raw []byte
		for _, task := range tasks {
			b, _ := os.ReadFile(task)
			raw = append(raw, b...)
		}
		if f := strings.Fields(string(raw)); len(f) != 1 {
			t.Fatalf("the supervising learn's children: %q", raw)
		} else if holder, err = strconv.Atoi(f[0]); err != nil {
			t.Fatal(err)
		}
	}
	err = queryOne(t, testDB.ConnString(), fmt.Sprintf(
		`SELECT nspname::text FROM pg_namespace WHERE obj_description(oid, 'pg_namespace') LIKE 'learn owner: {"pid":%d,%%'`, holder), &schema)
	if err != nil {
		t.Fatalf("no schema with an owner record of learn pid %d: %v", holder, err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), testDB.ConnString())
		if err == nil {
			conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			conn.Close(context.Background())
		}
	})
	return cmd, holder, schema, stderr
}

// quote makes a string literal of a schema name learn gave (learn_ and hex).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func schemaLeft(t *testing.T, name string) bool {
	t.Helper()
	var n int
	if err := queryOne(t, testDB.ConnString(), "SELECT count(*)::int FROM pg_namespace WHERE nspname = "+quote(name), &n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// The user's report: learn in URL mode killed outright (SIGKILL of the
// process that holds the connection, with no parent left to clean up) left
// its schema in their database, and learn doctor neither removed nor
// mentioned it. Now the doctor removes it and names the server, not the
// password.
func TestDoctorRemovesTheSchemaOfAKilledLearn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildLearn(t)
	cmd, holder, schema, _ := serveInURLMode(t, bin, false)
	cmd.Process.Kill()
	cmd.Wait()
	if !schemaLeft(t, schema) {
		t.Fatalf("the killed learn's schema %s is gone already: nothing to test", schema)
	}

	cfg, err := pgx.ParseConfig(testDB.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := doctorReport(t, "--database-url", testDB.ConnString())
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	want := fmt.Sprintf("url: removed an orphaned schema %s from the PostgreSQL at ", schema)
	if !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf("learn pid %d is gone", holder)) {
		t.Errorf("the report lacks %q and the pid", want)
	}
	if cfg.Password != "" && strings.Contains(out, cfg.Password) {
		t.Errorf("the report shows the password")
	}
	if schemaLeft(t, schema) {
		t.Errorf("the schema %s of the killed learn is still there", schema)
	}
}

// When the child that holds the connection dies and its supervising parent
// lives, the parent removes the child's schema, as it removes its cluster.
func TestParentRemovesTheSchemaOfAKilledChild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildLearn(t)
	cmd, child, schema, stderr := serveInURLMode(t, bin, true)
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	rest := stderr.String()
	want := fmt.Sprintf("removed an orphaned schema %s from the PostgreSQL at ", schema)
	if !strings.Contains(rest, want) || !strings.Contains(rest, fmt.Sprintf("learn pid %d is gone", child)) {
		t.Errorf("the parent's report lacks %q and the pid:\n%s", want, rest)
	}
	if schemaLeft(t, schema) {
		t.Errorf("the schema %s of the killed child is still there", schema)
	}
}

// --clean-cache removes learn's directory in the user cache directory (XDG
// honoured) and says how much it freed; a second run finds it empty.
func TestDoctorCleanCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir := filepath.Join(cache, "learn")
	os.MkdirAll(filepath.Join(dir, "postgres", "linux-amd64-17.5.0", "bin"), 0o700)
	os.WriteFile(filepath.Join(dir, "postgres", "linux-amd64-17.5.0", "bin", "postgres"), make([]byte, 3_000_000), 0o755)
	code, out, errs := runCLI(t, "doctor", "--clean-cache")
	if code != 0 || !strings.Contains(out, "removed "+dir+" (3.0 MB)") {
		t.Fatalf("doctor --clean-cache: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s remains", dir)
	}
	code, out, _ = runCLI(t, "doctor", "--clean-cache")
	if code != 0 || !strings.Contains(out, "nothing to remove") {
		t.Errorf("second --clean-cache: exit %d\n%s", code, out)
	}
}
