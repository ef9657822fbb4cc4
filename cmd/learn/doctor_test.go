package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/sim/pgtemp"
)

var threeWays = []string{"apt install postgresql", "brew install postgresql", "DATABASE_URL", "--database-url", "start Docker"}

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

func TestDoctorWithABadURLSaysTheThreeWays(t *testing.T) {
	t0 := time.Now()
	t.Setenv("DATABASE_URL", "postgres://learn:hunter22@127.0.0.1:1/nowhere")
	code, out, errs := doctor(t)
	if code != 1 || !strings.Contains(errs, "does not work") {
		t.Errorf("exit %d, stderr %q; want 1", code, errs)
	}
	for _, want := range append([]string{"127.0.0.1:1", "DATABASE_URL is set", "fix DATABASE_URL, or unset it"}, threeWays...) {
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

func TestDoctorWithNothingThatWorks(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "docker.sock"))
	code, out, _ := doctor(t, "--postgres", "docker")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range append([]string{"--postgres docker forces it", "no Docker daemon learn can use", "start the Docker daemon"}, threeWays...) {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
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
