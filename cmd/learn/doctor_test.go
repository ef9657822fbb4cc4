package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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

// doctor runs learn doctor in process and checks what every report holds.
func doctor(t *testing.T, args ...string) (int, string, string) {
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
	code, out, _ := doctor(t, "--postgres", "local")
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
	code, out, _ := doctor(t, "--database-url", testDB.ConnString())
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
	t0 := time.Now()
	t.Setenv("DATABASE_URL", "postgres://learn:hunter22@127.0.0.1:1/nowhere")
	code, out, errs := doctor(t)
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
	if d := time.Since(t0); d > 30*time.Second {
		t.Errorf("took %s", d)
	}
}

// The user's report: with Docker forced and no daemon, the doctor said to
// install the PostgreSQL server binaries, which were installed and work.
func TestDoctorWithDockerForcedAndNoDaemon(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "docker.sock"))
	code, out, _ := doctor(t, "--postgres", "docker")
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

func TestFixes(t *testing.T) {
	works := func(m pgtemp.Mode) pgtemp.Way { return pgtemp.Way{Mode: m, Available: true, Works: true} }
	fails := func(m pgtemp.Mode) pgtemp.Way {
		return pgtemp.Way{Mode: m, Available: true, Err: errors.New("broken")}
	}
	none := func(m pgtemp.Mode) pgtemp.Way { return pgtemp.Way{Mode: m, Missing: true, Err: errors.New("not here")} }
	ways := func(u, l, d pgtemp.Way) map[pgtemp.Mode]pgtemp.Way {
		return map[pgtemp.Mode]pgtemp.Way{pgtemp.URL: u, pgtemp.Local: l, pgtemp.Docker: d}
	}
	url, local, docker, auto := pgtemp.URL, pgtemp.Local, pgtemp.Docker, pgtemp.Auto
	flag, env := doctorSources{mode: "--postgres"}, doctorSources{mode: envPostgres}
	const (
		install = "install the PostgreSQL server binaries"
		setURL  = "set DATABASE_URL or pass --database-url"
		start   = "start Docker (learn then runs PostgreSQL in a container"
	)
	tests := []struct {
		name string
		mode pgtemp.Mode
		src  doctorSources
		ways map[pgtemp.Mode]pgtemp.Way
		want []string // the lines, each by its start
	}{
		{"docker forced, no daemon, local works", docker, flag, ways(none(url), works(local), none(docker)), []string{
			"--postgres docker forces Docker, which does not work here; leave it out (or --postgres local) to use the local binaries, which work",
			start}},
		{"docker forced by the environment", docker, env, ways(none(url), works(local), none(docker)), []string{
			"LEARN_POSTGRES=docker forces Docker, which does not work here; unset it (or pass --postgres local) to use the local binaries, which work",
			start}},
		{"docker forced, a broken URL is what learn would take", docker, doctorSources{mode: "--postgres", url: "DATABASE_URL"}, ways(fails(url), works(local), none(docker)), []string{
			"--postgres docker forces Docker, which does not work here; pass --postgres local to use the local binaries, which work",
			start}},
		{"docker forced, daemon there but failing", docker, flag, ways(none(url), works(local), fails(docker)), []string{
			"--postgres docker forces Docker, which does not work here; leave it out (or --postgres local)",
			"fix what stops PostgreSQL in Docker (see 3 above)"}},
		{"url forced, not set", url, flag, ways(none(url), works(local), none(docker)), []string{
			"--postgres url forces the database URL, which is not set; leave it out (or --postgres local) to use the local binaries, which work",
			setURL}},
		{"url forced, broken, Docker works", url, doctorSources{mode: "--postgres", url: "--database-url"}, ways(fails(url), none(local), works(docker)), []string{
			"--postgres url forces the database URL, which does not work here; pass --postgres docker to use Docker, which works",
			"fix --database-url (see 1 above)"}},
		{"local forced, not installed, the URL works", local, doctorSources{mode: "--postgres", url: "DATABASE_URL"}, ways(works(url), none(local), none(docker)), []string{
			"--postgres local forces the local binaries, which do not work here; leave it out (or --postgres url) to use the database URL, which works",
			install}},
		{"local forced, installed but failing, Docker works", local, flag, ways(none(url), fails(local), works(docker)), []string{
			"--postgres local forces the local binaries, which do not work here; leave it out (or --postgres docker) to use Docker, which works",
			"make the local PostgreSQL binaries work (see 2 above)"}},
		{"docker forced, nothing else works", docker, flag, ways(none(url), fails(local), none(docker)), []string{
			start,
			"leave out --postgres docker, and make the local PostgreSQL binaries work (see 2 above)",
			"leave out --postgres docker, and " + setURL}},
		{"docker forced, nothing else works, a broken URL set", docker, doctorSources{mode: "--postgres", url: "DATABASE_URL"}, ways(fails(url), fails(local), none(docker)), []string{
			start,
			"pass --postgres local instead, and make the local PostgreSQL binaries work (see 2 above)",
			"leave out --postgres docker, and fix DATABASE_URL (see 1 above)"}},
		{"docker forced by the environment, nothing else works", docker, env, ways(none(url), none(local), none(docker)), []string{
			start, "unset LEARN_POSTGRES, and " + install, "unset LEARN_POSTGRES, and " + setURL}},
		{"broken URL, local works", auto, doctorSources{url: "DATABASE_URL"}, ways(fails(url), works(local), none(docker)), []string{
			"fix DATABASE_URL, or unset it to let learn use the local binaries, which work"}},
		{"broken --database-url, Docker works", auto, doctorSources{url: "--database-url"}, ways(fails(url), none(local), works(docker)), []string{
			"fix --database-url, or leave it out to let learn use Docker, which works"}},
		{"broken URL, nothing else works", auto, doctorSources{url: "DATABASE_URL"}, ways(fails(url), fails(local), none(docker)), []string{
			"fix DATABASE_URL (see 1 above)",
			"unset DATABASE_URL, and make the local PostgreSQL binaries work (see 2 above)",
			"unset DATABASE_URL, and " + start}},
		{"nothing here", auto, doctorSources{}, ways(none(url), none(local), none(docker)), []string{install, setURL, start}},
		{"local binaries fail, no daemon", auto, doctorSources{}, ways(none(url), fails(local), none(docker)), []string{
			"make the local PostgreSQL binaries work (see 2 above)", setURL, start}},
		{"no binaries, Docker fails", auto, doctorSources{}, ways(none(url), none(local), fails(docker)), []string{
			"fix what stops PostgreSQL in Docker (see 3 above)", install, setURL}},
	}
	for _, tt := range tests {
		got := fixes(tt.mode, tt.src, tt.ways, choose(tt.mode, tt.src, tt.ways))
		ok := len(got) == len(tt.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], tt.want[i])
		}
		if !ok {
			t.Errorf("%s: fixes =\n  %s\nwant lines starting\n  %s", tt.name, strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
		}
		all := strings.Join(got, "\n")
		for m, line := range map[pgtemp.Mode]string{local: install, url: setURL, docker: start} {
			if strings.Contains(all, line) && !tt.ways[m].Missing {
				t.Errorf("%s: suggests %q, which is here", tt.name, line)
			}
		}
	}
	if got := fixes(docker, flag, ways(none(url), works(local), works(docker)), verdict{use: docker, ok: true}); got != nil {
		t.Errorf("fixes for a way that works = %q", got)
	}
}

func TestDoctorWithDockerForced(t *testing.T) {
	t.Setenv("LEARN_POSTGRES", "docker")
	code, out, _ := doctor(t)
	if code != 0 {
		if os.Getenv("LEARN_CI") == "" {
			t.Skip("Docker does not work here (see the report); CI runs this with a daemon and LEARN_POSTGRES_IMAGE")
		}
		t.Fatalf("exit %d under LEARN_CI", code)
	}
	for _, want := range []string{"learn would use: Docker", "LEARN_POSTGRES=docker forces it", "daemon:", pgtemp.DockerImage(), "reaper", "works: yes: started in", "All is well"} {
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

func TestChoose(t *testing.T) {
	works := func(m pgtemp.Mode) pgtemp.Way { return pgtemp.Way{Mode: m, Available: true, Works: true} }
	fails := func(m pgtemp.Mode) pgtemp.Way {
		return pgtemp.Way{Mode: m, Available: true, Err: errors.New("broken")}
	}
	none := func(m pgtemp.Mode) pgtemp.Way { return pgtemp.Way{Mode: m, Err: errors.New("not here")} }
	ways := func(u, l, d pgtemp.Way) map[pgtemp.Mode]pgtemp.Way {
		return map[pgtemp.Mode]pgtemp.Way{pgtemp.URL: u, pgtemp.Local: l, pgtemp.Docker: d}
	}
	url, local, docker := pgtemp.URL, pgtemp.Local, pgtemp.Docker
	env := doctorSources{url: "DATABASE_URL"}
	tests := []struct {
		name string
		mode pgtemp.Mode
		src  doctorSources
		ways map[pgtemp.Mode]pgtemp.Way
		use  pgtemp.Mode
		ok   bool
		why  string
	}{
		{"URL set and working", pgtemp.Auto, env, ways(works(url), works(local), works(docker)), url, true, "DATABASE_URL is set"},
		{"URL set and broken is never replaced", pgtemp.Auto, env, ways(fails(url), works(local), works(docker)), url, false, "never replaced"},
		{"no URL, local binaries", pgtemp.Auto, doctorSources{}, ways(none(url), works(local), works(docker)), local, true, "local PostgreSQL binaries were found"},
		{"no URL, no binaries, Docker", pgtemp.Auto, doctorSources{}, ways(none(url), none(local), works(docker)), docker, true, "no local PostgreSQL binaries"},
		{"broken binaries fall back to Docker", pgtemp.Auto, doctorSources{}, ways(none(url), fails(local), works(docker)), docker, true, "falls back to Docker"},
		{"nothing", pgtemp.Auto, doctorSources{}, ways(none(url), none(local), none(docker)), "", false, "no Docker daemon learn can use"},
		{"forced by the flag", docker, doctorSources{mode: "--postgres"}, ways(none(url), works(local), works(docker)), docker, true, "--postgres docker forces it"},
		{"forced by the environment, broken", local, doctorSources{mode: "LEARN_POSTGRES"}, ways(none(url), fails(local), works(docker)), local, false, "LEARN_POSTGRES=local forces it"},
	}
	for _, tt := range tests {
		v := choose(tt.mode, tt.src, tt.ways)
		if v.use != tt.use || v.ok != tt.ok || !strings.Contains(v.why, tt.why) {
			t.Errorf("%s: choose = %+v; want use %q ok %v why ~%q", tt.name, v, tt.use, tt.ok, tt.why)
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
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", holder, holder))
		if f := strings.Fields(string(raw)); err != nil || len(f) != 1 {
			t.Fatalf("the supervising learn's children: %q, %v", raw, err)
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
	code, out, _ := doctor(t, "--database-url", testDB.ConnString())
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
