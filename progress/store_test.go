package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The environment of a helper process of TestStoreTwoProcesses.
const (
	helperEnv      = "PROGRESS_STORE_HELPER_PATH" // the progress file
	helperNameEnv  = "PROGRESS_STORE_HELPER_NAME" // prefix of the keys it saves
	helperCountEnv = "PROGRESS_STORE_HELPER_N"    // how many Updates it makes
)

// storeHelper is the body of a helper process: n Updates, each adding its
// own page and answer, then exit 0 (1 on an error).
func storeHelper() int {
	s := &Store{Path: os.Getenv(helperEnv)}
	name := os.Getenv(helperNameEnv)
	n, err := strconv.Atoi(os.Getenv(helperCountEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	for i := range n {
		key := fmt.Sprintf("%s-%d", name, i)
		_, err := s.Update(func(p *Progress) error {
			p.MarkRead(key, time.Now())
			p.Record("race", key, 1, time.Now())
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
	}
	return 0
}

// The sets of the tests, as package quiz names them.
const (
	setCheckpoint = "checkpoint"
	setBreakIt    = "breakit"
	setInterview  = "interview"
)

// fixedNow is the clock of the tests that need a fixed time.
var fixedNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// testKnown is the questions the tests' stores know (Store.Known): five
// checkpoint questions and two interview prompts.
func testKnown() map[string][]string {
	return map[string][]string{
		setCheckpoint: {"checkpoint/1", "checkpoint/2", "checkpoint/3", "checkpoint/4", "checkpoint/5"},
		setInterview:  {"interview/idempotency", "interview/retry-across-instances"},
	}
}

func newStore(t *testing.T) *Store {
	t.Helper()
	return &Store{Path: filepath.Join(t.TempDir(), "state", "learn", FileName), Now: func() time.Time { return fixedNow }, Known: testKnown}
}

func mustLoad(t *testing.T, s *Store) (*Progress, []string) {
	t.Helper()
	p, notices, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	return p, notices
}

func jsonOf(t *testing.T, p *Progress) string {
	t.Helper()
	b, err := encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDefaultPath(t *testing.T) {
	home := func() (string, error) { return "/home/ada", nil }
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	tests := []struct {
		goos string
		env  map[string]string
		home func() (string, error)
		want string // "" means an error
	}{
		{"linux", nil, home, "/home/ada/.local/state/learn/progress.json"},
		{"linux", map[string]string{"XDG_STATE_HOME": "/tmp/st"}, home, "/tmp/st/learn/progress.json"},
		{"linux", map[string]string{"XDG_STATE_HOME": "relative/st"}, home, "/home/ada/.local/state/learn/progress.json"},
		{"freebsd", nil, home, "/home/ada/.local/state/learn/progress.json"},
		{"darwin", nil, home, "/home/ada/Library/Application Support/learn/progress.json"},
		{"darwin", map[string]string{"XDG_STATE_HOME": "/x"}, home, "/x/learn/progress.json"},
		{"windows", map[string]string{"LocalAppData": "/c/Users/ada/AppData/Local"}, home, "/c/Users/ada/AppData/Local/learn/progress.json"},
		{"windows", nil, home, ""},
		{"linux", nil, noHome, ""},
		{"linux", map[string]string{"XDG_STATE_HOME": "/s"}, noHome, "/s/learn/progress.json"},
	}
	for _, tt := range tests {
		got, err := defaultPath(tt.goos, func(k string) string { return tt.env[k] }, tt.home)
		if tt.want == "" {
			if err == nil {
				t.Errorf("%s %v: got %q, want an error", tt.goos, tt.env, got)
			}
			continue
		}
		if err != nil || filepath.ToSlash(got) != tt.want {
			t.Errorf("%s %v: got %q, %v; want %q", tt.goos, tt.env, got, err, tt.want)
		}
	}
}

func TestDefaultPathHonoursXDGStateHome(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	got, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "learn", "progress.json"); got != want {
		t.Fatalf("DefaultPath() = %q, want %q", got, want)
	}
	s := &Store{Path: got}
	if _, err := s.Update(func(p *Progress) error { p.MarkRead("idempotency", fixedNow); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(got); err != nil {
		t.Fatalf("the progress is not under XDG_STATE_HOME: %v", err)
	}
}

func TestStoreMissingFile(t *testing.T) {
	s := newStore(t)
	p, notices := mustLoad(t, s)
	if len(notices) != 0 || p.Version != CurrentVersion || len(p.Read) != 0 || p.Sets == nil || p.Drill == nil {
		t.Fatalf("Load of a missing file = %+v, %q", p, notices)
	}
	if _, err := os.Stat(filepath.Dir(s.Path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load created the state directory: %v", err)
	}
}

func TestStoreRoundTrip(t *testing.T) {
	s := newStore(t)
	at := fixedNow.Add(-time.Hour)
	saved, err := s.Update(func(p *Progress) error {
		p.MarkRead("idempotency", at)
		p.Record(setCheckpoint, "checkpoint/3", 1, at)
		p.Record(setCheckpoint, "checkpoint/2", 2.0/3, at)
		p.FinishAttempt(setCheckpoint, 0.8)
		p.FinishAttempt(setCheckpoint, 0.6)
		p.Drill["followup/redis-ttl"] = Review{Due: at.Add(24 * time.Hour), IntervalDays: 1, Ease: 2.5, Reps: 1}
		p.DrillSeconds = 25
		p.ExercisesDir = "/home/ada/learn-exercises"
		p.Resume = Place{Page: PagePlay, Name: "lost-answer", Variant: "broken"}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !saved.UpdatedAt.Equal(fixedNow) || saved.Version != CurrentVersion {
		t.Errorf("saved UpdatedAt %v version %d", saved.UpdatedAt, saved.Version)
	}
	got, notices := mustLoad(t, s)
	if len(notices) != 0 {
		t.Errorf("notices %q", notices)
	}
	if a, b := jsonOf(t, got), jsonOf(t, saved); a != b {
		t.Fatalf("loaded\n%s\nsaved\n%s", a, b)
	}
	sp := got.Sets[setCheckpoint]
	if sp.Attempts != 2 || sp.Best != 0.8 || sp.LastScore != 0.6 || sp.Answers["checkpoint/3"].Score != 1 {
		t.Errorf("checkpoint record %+v", sp)
	}
	if !got.Read["idempotency"].Equal(at) || got.Resume != (Place{Page: PagePlay, Name: "lost-answer", Variant: "broken"}) || got.Drill["followup/redis-ttl"].Reps != 1 || got.DrillSeconds != 25 || got.ExercisesDir != "/home/ada/learn-exercises" {
		t.Errorf("loaded %+v", got)
	}
}

func TestStoreUpdateErrorWritesNothing(t *testing.T) {
	s := newStore(t)
	boom := errors.New("boom")
	if _, err := s.Update(func(p *Progress) error { p.MarkRead("x", fixedNow); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(s.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a failed update wrote the file: %v", err)
	}
}

func TestStoreDamagedFile(t *testing.T) {
	valid, err := encode(NewProgress())
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"truncated":         string(valid[:len(valid)/2]),
		"empty":             "",
		"blank":             " \n\t",
		"garbage":           "\x00\x01 this is not JSON \xff",
		"null":              "null",
		"array":             "[1, 2]",
		"string version":    `{"version": "one"}`,
		"negative version":  `{"version": -1}`,
		"v0 with junk keys": `{"hello": "world"}`,
		"trailing garbage":  string(valid) + "}",
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.Path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := s.Export(&buf); err == nil || !strings.Contains(err.Error(), "is not a progress file (") {
				t.Errorf("Export of a damaged file: %v", err)
			}
			p, notices := mustLoad(t, s)
			aside := s.Path + ".damaged-20260314T150926Z"
			if len(notices) != 1 || !strings.Contains(notices[0], "is not a progress file (") || !strings.Contains(notices[0], "beside it, as "+filepath.Base(aside)) {
				t.Errorf("notices %q", notices)
			}
			if len(p.Read) != 0 || p.Version != CurrentVersion {
				t.Errorf("progress after a damaged file: %+v", p)
			}
			kept, err := os.ReadFile(aside)
			if err != nil || string(kept) != content {
				t.Errorf("the damaged file was not kept as it was: %q, %v", kept, err)
			}
			if _, err := os.Stat(s.Path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the damaged file is still in place: %v", err)
			}
			// learn goes on: the next save works and the next load is clean.
			if _, err := s.Update(func(p *Progress) error { p.MarkRead("idempotency", fixedNow); return nil }); err != nil {
				t.Fatal(err)
			}
			if p, notices := mustLoad(t, s); len(notices) != 0 || !p.IsRead("idempotency") {
				t.Errorf("after the fresh start: %+v %q", p, notices)
			}
		})
	}
}

func TestStoreDamagedTwiceKeepsBoth(t *testing.T) {
	s := newStore(t)
	var notes []string
	s.Notify = func(n string) { notes = append(notes, n) }
	for i, content := range []string{"{", "[["} {
		if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Update(func(*Progress) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if len(notes) != i+1 {
			t.Fatalf("Update gave notices %q", notes)
		}
	}
	for _, name := range []string{".damaged-20260314T150926Z", ".damaged-20260314T150926Z-2"} {
		if _, err := os.Stat(s.Path + name); err != nil {
			t.Error(err)
		}
	}
}

func TestStoreOlderVersion(t *testing.T) {
	s := newStore(t)
	fixture, err := os.ReadFile(filepath.Join("testdata", "progress-v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path, fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	var exported bytes.Buffer
	if err := s.Export(&exported); err != nil || !strings.Contains(exported.String(), fmt.Sprintf(`"version": %d`, CurrentVersion)) {
		t.Errorf("Export of a v0 file: %v\n%s", err, exported.String())
	}
	p, notices := mustLoad(t, s)
	if len(notices) != 1 || !strings.Contains(notices[0], "older format (version 0)") {
		t.Fatalf("notices %q", notices)
	}
	saved := time.Date(2025, 11, 2, 18, 4, 5, 0, time.UTC)
	if p.Version != CurrentVersion || !p.Read["idempotency"].Equal(saved) || len(p.Read) != 1 {
		t.Errorf("read %v version %d", p.Read, p.Version)
	}
	if cp := p.Sets[setCheckpoint]; cp == nil || cp.Best != 0.8 || cp.LastScore != 0.6 || cp.Attempts != 2 || cp.Answers == nil {
		t.Errorf("checkpoint %+v", cp)
	}
	if bi := p.Sets[setBreakIt]; bi == nil || bi.Best != 0.5 || bi.Attempts != 1 {
		t.Errorf("breakit %+v", bi)
	}
	r := p.Drill["followup/redis-ttl"]
	if !r.Due.Equal(time.Date(2025, 11, 5, 9, 0, 0, 0, time.UTC)) || r.IntervalDays != 3 || r.Ease != 2.5 || r.Reps != 2 {
		t.Errorf("card %+v", r)
	}
	if p.Resume != (Place{Page: PageReader, Name: "idempotency"}) {
		t.Errorf("resume %+v", p.Resume)
	}
	// The original is kept, and the file is now of the current version.
	if kept, err := os.ReadFile(s.Path + ".v0"); err != nil || !bytes.Equal(kept, fixture) {
		t.Errorf("the v0 original was not kept: %v", err)
	}
	var head struct{ Version int }
	data, _ := os.ReadFile(s.Path)
	if err := json.Unmarshal(data, &head); err != nil || head.Version != CurrentVersion {
		t.Errorf("the file on disk is version %d (%v)", head.Version, err)
	}
	again, notices := mustLoad(t, s)
	if len(notices) != 0 {
		t.Errorf("second load notices %q", notices)
	}
	if jsonOf(t, again) != jsonOf(t, p) {
		t.Errorf("second load differs")
	}
}

func TestStoreNewerVersion(t *testing.T) {
	s := newStore(t)
	newer := []byte(`{"version": 99, "read": {"idempotency": "2030-01-01T00:00:00Z"}, "hologram": true}` + "\n")
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path, newer, 0o600); err != nil {
		t.Fatal(err)
	}
	p, notices := mustLoad(t, s)
	if len(notices) != 1 || !strings.Contains(notices[0], "newer learn") || len(p.Read) != 0 {
		t.Errorf("Load: %+v %q", p, notices)
	}
	if _, err := s.Update(func(p *Progress) error { p.MarkRead("x", fixedNow); return nil }); !errors.Is(err, ErrNewerVersion) {
		t.Errorf("Update over a newer file: err = %v", err)
	}
	var out bytes.Buffer
	if err := s.Export(&out); err != nil || !bytes.Equal(out.Bytes(), newer) {
		t.Errorf("Export of a newer file = %q, %v", out.String(), err)
	}
	if data, _ := os.ReadFile(s.Path); !bytes.Equal(data, newer) {
		t.Errorf("the newer file was changed: %q", data)
	}
}

func TestStoreResetAndExport(t *testing.T) {
	s := newStore(t)
	var out bytes.Buffer
	if err := s.Export(&out); err != nil {
		t.Fatal(err)
	}
	var empty Progress
	if err := json.Unmarshal(out.Bytes(), &empty); err != nil || empty.Version != CurrentVersion {
		t.Fatalf("Export of nothing = %q, %v", out.String(), err)
	}
	if strings.Contains(out.String(), "updated_at") {
		t.Errorf("Export of nothing says when it was saved: %q", out.String())
	}
	// The export of nothing reads back as a progress file: nothing set
	// aside, nothing damaged.
	back := newStore(t)
	if err := os.MkdirAll(filepath.Dir(back.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(back.Path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, notes, err := back.Load(); err != nil || len(notes) != 0 || p.Version != CurrentVersion || !p.UpdatedAt.IsZero() {
		t.Errorf("loading the export of nothing: %+v, notes %q, %v", p, notes, err)
	}
	saved, err := s.Update(func(p *Progress) error { p.MarkRead("idempotency", fixedNow); return nil })
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := s.Export(&out); err != nil {
		t.Fatal(err)
	}
	if out.String() != jsonOf(t, saved) {
		t.Errorf("Export =\n%s\nwant\n%s", out.String(), jsonOf(t, saved))
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if p, _ := mustLoad(t, s); len(p.Read) != 0 {
		t.Errorf("after Reset: %+v", p)
	}
	if err := s.Reset(); err != nil {
		t.Errorf("Reset of nothing: %v", err)
	}
}

func TestStoreFilesAndModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	s := newStore(t)
	for i := range 5 {
		if _, err := s.Update(func(p *Progress) error { p.MarkRead(fmt.Sprint(i), fixedNow); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Dir(s.Path)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, err := os.Stat(filepath.Dir(dir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("parent directory created with mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	fi, err = os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("progress file mode %v, want 0600", fi.Mode().Perm())
	}
	// The atomic write leaves no temporary file: only the file and its lock.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{FileName, FileName + ".lock"}) {
		t.Errorf("the state directory holds %q", names)
	}
}

// The lock is only a lock: its file stays empty (0600), and taking it
// changes nothing about the progress file, not even a read-only one's mode.
func TestStoreLockWritesNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	s := newStore(t)
	if _, err := s.Update(func(p *Progress) error { p.MarkRead("idempotency", fixedNow); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Path, 0o400); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := mustLoad(t, s); !p.IsRead("idempotency") { // Load takes the lock
		t.Errorf("Load lost the page read: %s", jsonOf(t, p))
	}
	fi, err := os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o400 || !bytes.Equal(after, before) {
		t.Errorf("after Load the progress file is %v with %q, want 0400 with %q", fi.Mode().Perm(), after, before)
	}
	lock, err := os.Stat(s.Path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	if lock.Size() != 0 || lock.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %d bytes, mode %v; want empty, 0600", lock.Size(), lock.Mode().Perm())
	}
}

func TestStoreRemovesStaleTemp(t *testing.T) {
	s := newStore(t)
	if _, err := s.Update(func(*Progress) error { return nil }); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(filepath.Dir(s.Path), "."+FileName+".tmp-123")
	if err := os.WriteFile(stale, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(func(*Progress) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a temporary file left by a crash is still there: %v", err)
	}
}

// TestStoreConcurrentGoroutines saves from many goroutines of one process,
// each through its own Store value: every change is kept.
func TestStoreConcurrentGoroutines(t *testing.T) {
	path := newStore(t).Path
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			s := &Store{Path: path}
			for i := range each {
				if _, err := s.Update(func(p *Progress) error {
					p.Record("race", fmt.Sprintf("g%d-%d", w, i), 1, time.Now())
					return nil
				}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p, _ := mustLoad(t, &Store{Path: path})
	if n := len(p.Sets["race"].Answers); n != workers*each {
		t.Fatalf("%d answers saved, want %d", n, workers*each)
	}
}

// TestStoreTwoProcesses runs copies of this test binary that save to the
// same file at once, each many Updates of its own keys; afterwards every
// key of every process is there.
func TestStoreTwoProcesses(t *testing.T) {
	s := newStore(t)
	const procs, each = 3, 60
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			helperEnv+"="+s.Path,
			fmt.Sprintf("%s=p%d", helperNameEnv, i),
			fmt.Sprintf("%s=%d", helperCountEnv, each))
		outs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		cmds[i] = cmd
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v\n%s", i, err, outs[i])
		}
	}
	p, notices := mustLoad(t, s)
	if len(notices) != 0 {
		t.Errorf("notices %q", notices)
	}
	var missing []string
	for i := range procs {
		for j := range each {
			key := fmt.Sprintf("p%d-%d", i, j)
			if !p.IsRead(key) {
				missing = append(missing, "read "+key)
			}
			if _, ok := p.Sets["race"].Answers[key]; !ok {
				missing = append(missing, "answer "+key)
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d saves lost: %v", len(missing), missing)
	}
	if len(p.Read) != procs*each {
		t.Errorf("%d pages read, want %d", len(p.Read), procs*each)
	}
}
