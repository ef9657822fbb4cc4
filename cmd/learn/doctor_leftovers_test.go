package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// fakeLearnSchema makes a schema learn_<16 hex> in the test database with
// comment (none when ""), dropped when the test ends, and returns its name.
func fakeLearnSchema(t *testing.T, comment string) string {
	t.Helper()
	name := fmt.Sprintf("learn_%016x", rand.Uint64())
	sql := "CREATE SCHEMA " + name
	if comment != "" {
		sql += "; COMMENT ON SCHEMA " + name + " IS " + quote(comment)
	}
	conn, err := pgx.Connect(t.Context(), testDB.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), sql); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), testDB.ConnString())
		if err == nil {
			conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE")
			conn.Close(context.Background())
		}
	})
	return name
}

// The user's report: schemas left by a learn on another host, or by one
// killed before the machine restarted, were never mentioned: the doctor
// said "no schemas of killed learn runs" while they were there. Learn
// cannot tell from here whether such a learn still runs, so it must not
// drop them; it lists each with the command that drops it, and leaves them.
func TestDoctorListsSchemasItCannotJudge(t *testing.T) {
	host, _ := os.Hostname()
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	otherHost := fakeLearnSchema(t, `learn owner: {"pid":4242,"start_ticks":"77","boot_id":"b","host":"build-box-7","created":"2026-01-02T03:04:05Z"}`)
	beforeBoot := fakeLearnSchema(t, fmt.Sprintf(`learn owner: {"pid":4243,"boot_id":"not-%s","host":%q,"created":"2026-01-02T03:04:05Z"}`, strings.TrimSpace(string(boot)), host))

	code, out, _ := doctorReport(t, "--database-url", testDB.ConnString())
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	_, leftovers, _ := strings.Cut(out, "Leftovers")
	leftovers, _, _ = strings.Cut(leftovers, "\n1. ")
	if strings.Contains(leftovers, "no schemas of killed learn runs") {
		t.Errorf("the doctor says there are no schemas of killed learn runs while two are there")
	}
	for _, want := range []string{
		otherHost, "build-box-7", "DROP SCHEMA " + otherHost + " CASCADE",
		beforeBoot, "restarted", "DROP SCHEMA " + beforeBoot + " CASCADE",
	} {
		if !strings.Contains(leftovers, want) {
			t.Errorf("the leftovers section lacks %q", want)
		}
	}
	if !schemaLeft(t, otherHost) || !schemaLeft(t, beforeBoot) {
		t.Errorf("the doctor dropped a schema whose learn it cannot check")
	}
}

// leftTemplateCopy makes what a learn killed (kill -9) while saving its
// cluster template leaves in the cache: <cache>/learn/pg-template-<major>-<uid>.tmp-<random>
// holding part of a data directory. size is how many bytes it holds.
func leftTemplateCopy(t *testing.T, cache string, size int) string {
	t.Helper()
	root := filepath.Join(cache, "learn")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(root, fmt.Sprintf("pg-template-15-%d.tmp-", os.Geteuid()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "base", "1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "base", "1", "1259"), make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The user's report: a learn killed while it copied the cluster template
// into the cache left 5 to 22 MB there, removed only by the next template
// save (which a warm start never makes) and only when over an hour old.
// learn doctor, as any run, removes it, and says so.
func TestDoctorRemovesAnInterruptedTemplateCopy(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	left := leftTemplateCopy(t, cache, 5<<20)

	_, out, _ := doctorReport(t, "--postgres", "local")
	if _, err := os.Stat(left); err == nil {
		t.Errorf("the interrupted template copy %s is still there", left)
	}
	_, leftovers, _ := strings.Cut(out, "Leftovers")
	leftovers, _, _ = strings.Cut(leftovers, "\n1. ")
	if !strings.Contains(leftovers, left) || !strings.Contains(leftovers, "5.2 MB") {
		t.Errorf("the leftovers section does not name %s and its size", left)
	}
}

// mountTmpfs mounts a tmpfs of size (e.g. "1m") with extra options (e.g.
// "ro") on a new directory and returns it; the test's cleanup unmounts it.
// Mounting needs root: the test skips without it.
func mountTmpfs(t *testing.T, size, extra string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	// A short path, so that a cluster's socket path fits under it, that
	// the cluster user (learn as root runs it as postgres) can reach.
	dir, err := os.MkdirTemp("", "learn-test-mnt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) }) // after the unmount below
	opts := "size=" + size + ",mode=0755"
	if extra != "" {
		opts += "," + extra
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// The user's report: with a cache directory learn cannot save its template
// in, learn doctor said "cold: ran initdb and saved the template; later
// starts copy it", which was false: every start runs initdb. Now it says
// the template was not saved, why, and what that costs here. The whole
// kind: a cache path that is a file, a read-only cache directory, a full
// one.
func TestDoctorNeverClaimsATemplateItDidNotSave(t *testing.T) {
	if _, err := os.Stat("/usr/lib/postgresql"); err != nil {
		t.Skip("no local PostgreSQL binaries here")
	}
	cases := []struct {
		name  string
		cache func(t *testing.T) string // the XDG_CACHE_HOME to use
		why   string
	}{
		{"a file in the way", func(t *testing.T) string {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, "learn"), []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}
			return home
		}, "is a file"},
		{"a read-only cache directory", func(t *testing.T) string { return mountTmpfs(t, "64m", "ro") }, "read-only"},
		{"a full cache directory", func(t *testing.T) string { return mountTmpfs(t, "1m", "") }, "no space left on device"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := c.cache(t)
			t.Setenv("XDG_CACHE_HOME", cache)
			code, out, _ := doctorReport(t, "--postgres", "local")
			_, local, _ := strings.Cut(out, "2. local PostgreSQL binaries")
			local, _, _ = strings.Cut(local, "3. Docker")
			if code != 0 || !strings.Contains(local, "works: yes") {
				t.Fatalf("exit %d; the local binaries do not work", code)
			}
			if strings.Contains(local, "saved the template") || strings.Contains(local, "saves it there") || strings.Contains(local, "later starts copy it") {
				t.Errorf("the report claims a template that was not saved")
			}
			for _, want := range []string{"not saved", c.why, "every start runs initdb", "about"} {
				if !strings.Contains(local, want) {
					t.Errorf("the local section lacks %q", want)
				}
			}
			if m, _ := filepath.Glob(filepath.Join(cache, "learn", "pg-template-*")); len(m) > 0 {
				t.Errorf("left in the cache: %v", m)
			}
		})
	}
}

// The user's report: with TMPDIR full, learn said "learn found no
// PostgreSQL … install the PostgreSQL server binaries", which were
// installed. Now the first thing it says is what is wrong and where.
func TestFullTMPDIRSaysSoFirst(t *testing.T) {
	if _, err := os.Stat("/usr/lib/postgresql"); err != nil {
		t.Skip("no local PostgreSQL binaries here")
	}
	full := mountTmpfs(t, "1m", "")
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-docker.sock")) // before TMPDIR moves t.TempDir
	t.Setenv("TMPDIR", full)
	t.Setenv("DATABASE_URL", "")
	for _, mode := range []string{"auto", "local"} {
		code, _, errs := runCLI(t, "demo", "lost-answer", "--postgres", mode)
		t.Logf("--postgres %s: exit %d\n%s", mode, code, errs)
		if code != 1 || !strings.HasPrefix(errs, "learn: no space left on device in "+full) {
			t.Errorf("--postgres %s: exit %d; stderr does not start with %q", mode, code, "learn: no space left on device in "+full)
		}
		if strings.Contains(errs, "install the PostgreSQL server binaries") {
			t.Errorf("--postgres %s: it says to install the binaries, which are here", mode)
		}
		if left, _ := os.ReadDir(full); len(left) > 0 {
			t.Errorf("--postgres %s: left in %s: %v", mode, full, left)
		}
	}
}
