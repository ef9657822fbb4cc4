package doctor

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/learn-idempotency/learn/pgtemp"
)

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
	env := Sources{URL: "DATABASE_URL"}
	tests := []struct {
		name string
		mode pgtemp.Mode
		src  Sources
		ways map[pgtemp.Mode]pgtemp.Way
		use  pgtemp.Mode
		ok   bool
		why  string
	}{
		{"URL set and working", pgtemp.Auto, env, ways(works(url), works(local), works(docker)), url, true, "DATABASE_URL is set"},
		{"URL set and broken is never replaced", pgtemp.Auto, env, ways(fails(url), works(local), works(docker)), url, false, "never replaced"},
		{"no URL, local binaries", pgtemp.Auto, Sources{}, ways(none(url), works(local), works(docker)), local, true, "local PostgreSQL binaries were found"},
		{"no URL, no binaries, Docker", pgtemp.Auto, Sources{}, ways(none(url), none(local), works(docker)), docker, true, "no local PostgreSQL binaries"},
		{"broken binaries fall back to Docker", pgtemp.Auto, Sources{}, ways(none(url), fails(local), works(docker)), docker, true, "falls back to Docker"},
		{"nothing", pgtemp.Auto, Sources{}, ways(none(url), none(local), none(docker)), "", false, "no Docker daemon learn can use"},
		{"forced by the flag", docker, Sources{Mode: "--postgres"}, ways(none(url), works(local), works(docker)), docker, true, "--postgres docker forces it"},
		{"forced by the environment, broken", local, Sources{Mode: "LEARN_POSTGRES"}, ways(none(url), fails(local), works(docker)), local, false, "LEARN_POSTGRES=local forces it"},
	}
	for _, tt := range tests {
		v := Choose(tt.mode, tt.src, tt.ways)
		if v.Use != tt.use || v.OK != tt.ok || !strings.Contains(v.Why, tt.why) {
			t.Errorf("%s: choose = %+v; want use %q ok %v why ~%q", tt.name, v, tt.use, tt.ok, tt.why)
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
	flag, env := Sources{Mode: "--postgres"}, Sources{Mode: EnvPostgres}
	const (
		install = "install the PostgreSQL server binaries"
		setURL  = "set DATABASE_URL or pass --database-url"
		start   = "start Docker (learn then runs PostgreSQL in a container"
	)
	tests := []struct {
		name string
		mode pgtemp.Mode
		src  Sources
		ways map[pgtemp.Mode]pgtemp.Way
		want []string // the lines, each by its start
	}{
		{"docker forced, no daemon, local works", docker, flag, ways(none(url), works(local), none(docker)), []string{
			"--postgres docker forces Docker, which does not work here; leave it out (or --postgres local) to use the local binaries, which work",
			start}},
		{"docker forced by the environment", docker, env, ways(none(url), works(local), none(docker)), []string{
			"LEARN_POSTGRES=docker forces Docker, which does not work here; unset it (or pass --postgres local) to use the local binaries, which work",
			start}},
		{"docker forced, a broken URL is what learn would take", docker, Sources{Mode: "--postgres", URL: "DATABASE_URL"}, ways(fails(url), works(local), none(docker)), []string{
			"--postgres docker forces Docker, which does not work here; pass --postgres local to use the local binaries, which work",
			start}},
		{"docker forced, daemon there but failing", docker, flag, ways(none(url), works(local), fails(docker)), []string{
			"--postgres docker forces Docker, which does not work here; leave it out (or --postgres local)",
			"fix what stops PostgreSQL in Docker (see 3 above)"}},
		{"url forced, not set", url, flag, ways(none(url), works(local), none(docker)), []string{
			"--postgres url forces the database URL, which is not set; leave it out (or --postgres local) to use the local binaries, which work",
			setURL}},
		{"url forced, broken, Docker works", url, Sources{Mode: "--postgres", URL: "--database-url"}, ways(fails(url), none(local), works(docker)), []string{
			"--postgres url forces the database URL, which does not work here; pass --postgres docker to use Docker, which works",
			"fix --database-url (see 1 above)"}},
		{"local forced, not installed, the URL works", local, Sources{Mode: "--postgres", URL: "DATABASE_URL"}, ways(works(url), none(local), none(docker)), []string{
			"--postgres local forces the local binaries, which do not work here; leave it out (or --postgres url) to use the database URL, which works",
			install}},
		{"local forced, installed but failing, Docker works", local, flag, ways(none(url), fails(local), works(docker)), []string{
			"--postgres local forces the local binaries, which do not work here; leave it out (or --postgres docker) to use Docker, which works",
			"make the local PostgreSQL binaries work (see 2 above)"}},
		{"docker forced, nothing else works", docker, flag, ways(none(url), fails(local), none(docker)), []string{
			start,
			"leave out --postgres docker, and make the local PostgreSQL binaries work (see 2 above)",
			"leave out --postgres docker, and " + setURL}},
		{"docker forced, nothing else works, a broken URL set", docker, Sources{Mode: "--postgres", URL: "DATABASE_URL"}, ways(fails(url), fails(local), none(docker)), []string{
			start,
			"pass --postgres local instead, and make the local PostgreSQL binaries work (see 2 above)",
			"leave out --postgres docker, and fix DATABASE_URL (see 1 above)"}},
		{"docker forced by the environment, nothing else works", docker, env, ways(none(url), none(local), none(docker)), []string{
			start, "unset LEARN_POSTGRES, and " + install, "unset LEARN_POSTGRES, and " + setURL}},
		{"broken URL, local works", auto, Sources{URL: "DATABASE_URL"}, ways(fails(url), works(local), none(docker)), []string{
			"fix DATABASE_URL, or unset it to let learn use the local binaries, which work"}},
		{"broken --database-url, Docker works", auto, Sources{URL: "--database-url"}, ways(fails(url), none(local), works(docker)), []string{
			"fix --database-url, or leave it out to let learn use Docker, which works"}},
		{"broken URL, nothing else works", auto, Sources{URL: "DATABASE_URL"}, ways(fails(url), fails(local), none(docker)), []string{
			"fix DATABASE_URL (see 1 above)",
			"unset DATABASE_URL, and make the local PostgreSQL binaries work (see 2 above)",
			"unset DATABASE_URL, and " + start}},
		{"nothing here", auto, Sources{}, ways(none(url), none(local), none(docker)), []string{install, setURL, start}},
		{"local binaries fail, no daemon", auto, Sources{}, ways(none(url), fails(local), none(docker)), []string{
			"make the local PostgreSQL binaries work (see 2 above)", setURL, start}},
		{"no binaries, Docker fails", auto, Sources{}, ways(none(url), none(local), fails(docker)), []string{
			"fix what stops PostgreSQL in Docker (see 3 above)", install, setURL}},
	}
	for _, tt := range tests {
		got := Fixes(tt.mode, tt.src, tt.ways, Choose(tt.mode, tt.src, tt.ways))
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
	if got := Fixes(docker, flag, ways(none(url), works(local), works(docker)), Verdict{Use: docker, OK: true}); got != nil {
		t.Errorf("fixes for a way that works = %q", got)
	}
}

func TestPrinterWay(t *testing.T) {
	tests := []struct {
		name string
		way  pgtemp.Way
		src  Sources
		want string
	}{
		{"a URL that works", pgtemp.Way{Mode: pgtemp.URL, Available: true, Works: true, ReadyIn: 1234567 * time.Microsecond,
			Describe: "PostgreSQL 15 at 127.0.0.1:5432", Details: []string{"DATABASE_URL: postgres://learn@127.0.0.1:5432/learn"}},
			Sources{URL: "DATABASE_URL"},
			"   from: DATABASE_URL\n" +
				"   found: DATABASE_URL: postgres://learn@127.0.0.1:5432/learn\n" +
				"   works: yes: started in 1.235s; made a schema, ran SELECT 1 in it, dropped it\n" +
				"   server: PostgreSQL 15 at 127.0.0.1:5432\n"},
		{"warm local binaries", pgtemp.Way{Mode: pgtemp.Local, Available: true, Works: true, ReadyIn: 300 * time.Millisecond, Describe: "PostgreSQL 15"},
			Sources{},
			"   works: yes: started in 300ms (warm: copied the template); made a schema, ran SELECT 1 in it, stopped the cluster and removed its directory\n" +
				"   server: PostgreSQL 15\n"},
		{"cold local binaries that saved the template", pgtemp.Way{Mode: pgtemp.Local, Available: true, Works: true, Cold: true, InitdbTook: 2100 * time.Millisecond,
			ReadyIn: 2500 * time.Millisecond, Describe: "PostgreSQL 15"},
			Sources{},
			"   works: yes: started in 2.5s (cold: ran initdb and saved the template; later starts copy it); made a schema, ran SELECT 1 in it, stopped the cluster and removed its directory\n" +
				"   server: PostgreSQL 15\n"},
		{"cold local binaries that could not save the template", pgtemp.Way{Mode: pgtemp.Local, Available: true, Works: true, Cold: true, InitdbTook: 2140 * time.Millisecond,
			ReadyIn: 2500 * time.Millisecond, Describe: "PostgreSQL 15", TemplateErr: errors.New("/home/me/.cache/learn is on a read-only file system")},
			Sources{},
			"   works: yes: started in 2.5s (cold: ran initdb; the template was not saved, see below); made a schema, ran SELECT 1 in it, stopped the cluster and removed its directory\n" +
				"   server: PostgreSQL 15\n" +
				"   template: not saved: /home/me/.cache/learn is on a read-only file system; so every start runs initdb, about 2.1 s here; fix that, or set XDG_CACHE_HOME to a directory learn may write\n"},
		{"no Docker, a two-line reason", pgtemp.Way{Mode: pgtemp.Docker, Missing: true, Err: errors.New("no daemon\nstart it")},
			Sources{},
			"   available: no: no daemon\n" +
				"              start it\n"},
		{"local binaries that fail, with no error", pgtemp.Way{Mode: pgtemp.Local, Available: true},
			Sources{},
			"   works: no: unknown error\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		(&Printer{W: &b}).Way(tt.way, tt.src)
		if b.String() != tt.want {
			t.Errorf("%s:\n%s\nwant\n%s", tt.name, b.String(), tt.want)
		}
	}
}

// The fourth way: chosen after Docker, suggested when the doctor looked at
// it and it does not work.
func TestChooseAndFixTheDownload(t *testing.T) {
	works := func(m pgtemp.Mode) pgtemp.Way { return pgtemp.Way{Mode: m, Available: true, Works: true} }
	fails := func(m pgtemp.Mode) pgtemp.Way { return pgtemp.Way{Mode: m, Available: true, Err: errors.New("broken")} }
	none := func(m pgtemp.Mode) pgtemp.Way { return pgtemp.Way{Mode: m, Missing: true, Err: errors.New("not here")} }
	url, local, docker, dl := pgtemp.URL, pgtemp.Local, pgtemp.Docker, pgtemp.Download
	ways := func(u, l, d, w pgtemp.Way) map[pgtemp.Mode]pgtemp.Way {
		return map[pgtemp.Mode]pgtemp.Way{url: u, local: l, docker: d, dl: w}
	}
	const online = "let learn download PostgreSQL once: go online"
	tests := []struct {
		name  string
		mode  pgtemp.Mode
		ways  map[pgtemp.Mode]pgtemp.Way
		use   pgtemp.Mode
		ok    bool
		why   string
		fixes []string
	}{
		{"nothing installed, the download works", pgtemp.Auto, ways(none(url), none(local), none(docker), works(dl)), dl, true, "needs nothing installed", nil},
		{"local and Docker fail, the download works", pgtemp.Auto, ways(none(url), fails(local), fails(docker), works(dl)), dl, true, "neither the local PostgreSQL binaries nor Docker work", nil},
		{"Docker works first", pgtemp.Auto, ways(none(url), none(local), works(docker), works(dl)), docker, true, "a Docker daemon answers", nil},
		{"offline and nothing installed", pgtemp.Auto, ways(none(url), none(local), none(docker), none(dl)), "", false, "cannot be downloaded",
			[]string{"install the PostgreSQL server binaries", "set DATABASE_URL", "start Docker", online}},
		{"downloaded but failing", pgtemp.Auto, ways(none(url), none(local), none(docker), fails(dl)), dl, false, "would download",
			[]string{"fix what stops the downloaded PostgreSQL (see 4 above)", "install the PostgreSQL server binaries", "set DATABASE_URL", "start Docker"}},
		{"download forced, offline, local works", dl, ways(none(url), works(local), none(docker), none(dl)), dl, false, "--postgres download forces it",
			[]string{"--postgres download forces the downloaded PostgreSQL, which does not work here; leave it out (or --postgres local) to use the local binaries, which work", online}},
	}
	for _, tt := range tests {
		v := Choose(tt.mode, Sources{}, tt.ways)
		if v.Use != tt.use || v.OK != tt.ok || !strings.Contains(v.Why, tt.why) {
			t.Errorf("%s: choose = %+v; want use %q ok %v why ~%q", tt.name, v, tt.use, tt.ok, tt.why)
		}
		got := Fixes(tt.mode, Sources{}, tt.ways, v)
		ok := len(got) == len(tt.fixes)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], tt.fixes[i])
		}
		if !ok {
			t.Errorf("%s: fixes =\n  %s\nwant lines starting\n  %s", tt.name, strings.Join(got, "\n  "), strings.Join(tt.fixes, "\n  "))
		}
	}
}
