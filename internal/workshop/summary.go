package workshop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
)

// DefaultSummaryDir is where learn writes the room's summaries: the
// workshops directory beside the progress file, under the XDG state
// directory.
func DefaultSummaryDir() (string, error) {
	p, err := progress.DefaultPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "workshops"), nil
}

// CheckSummaryDir makes dir (0700) if need be and checks that a file can
// be written in it, as WriteSummary will at the end: learn workshop calls
// it before anything starts, so that a directory that cannot take the
// room's summary is said at once rather than after the workshop. The
// error says which directory and to pass --summary-dir.
func CheckSummaryDir(dir string) error {
	fail := func(err error) error {
		return fmt.Errorf("cannot write the room's summary into %s: %w; pass --summary-dir with a directory you can write", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(dir, ".summary-check-*")
	if err != nil {
		return fail(err)
	}
	f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return fail(err)
	}
	return nil
}

// WriteSummary writes the room's summary as JSON into dir (made 0700 if
// need be), named after the workshop's start, and returns the file's
// path. The file is 0600 (it holds the attendees' names and progress) and
// appears whole or not at all (writeSummaryFile).
func WriteSummary(dir string, s room.Summary) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("cannot write the room's summary into %s: %w", dir, err)
	}
	path := summaryPath(dir, s.Started)
	if err := writeSummaryFile(path, s); err != nil {
		return "", err
	}
	return path, nil
}

// summaryPath is the file of the summary of a workshop started then.
func summaryPath(dir string, started time.Time) string {
	return filepath.Join(dir, "learn-workshop-"+started.Format("2006-01-02-150405")+".json")
}

// writeSummaryFile writes s as JSON to path, 0600, whole or not at all,
// and durably: written to a temporary file beside it, synced, renamed
// over path, and the directory synced, so that a power cut leaves the
// last copy written or the one before, never a part.
func writeSummaryFile(path string, s room.Summary) error {
	dir := filepath.Dir(path)
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".summary-*")
	if err != nil {
		return fmt.Errorf("cannot write the room's summary into %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the room's summary: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the room's summary: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the room's summary: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing the room's summary: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself, durable (not every system syncs a directory)
		d.Close()
	}
	return nil
}

// keepEvery is how often at most the kept summary is written: a crash, a
// kill -9 or a power cut loses what changed in the last second at most.
const keepEvery = time.Second

// keeper keeps the room's summary in its file as the room changes, from
// the workshop's start to its end, and says, for as long as it runs,
// that it does: a marker file in the markers directory, locked (flock)
// while the process lives, names the summary's file. A marker whose lock
// is free is of a workshop that never ended (killed, crashed, a power
// cut); KeptSummaries finds it.
type keeper struct {
	room   *room.Room
	path   string
	marker string
	lock   *flock.Flock
	every  time.Duration
	logf   func(format string, args ...any)
	stop   chan struct{}
	done   chan struct{}
	failed bool // the last write failed (said once until one succeeds)
}

// marker is what a marker file holds.
type marker struct {
	Summary string    `json:"summary"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// startKeeper writes the room's summary into dir now, marks it in markers
// (made 0700 if need be) as kept by this process, and keeps writing it as
// the room changes, at most every keepEvery, until finish. logf is told
// of a write that failed (the next change tries again). On error nothing
// is left.
func startKeeper(dir, markers string, r *room.Room, logf func(string, ...any)) (k *keeper, err error) {
	started := r.Summary(time.Time{}).Started
	path := summaryPath(dir, started)
	if _, err := os.Lstat(path); err == nil { // another workshop's, started the same second
		path = strings.TrimSuffix(path, ".json") + fmt.Sprintf("-%d.json", os.Getpid())
	}
	k = &keeper{room: r, path: path, every: keepEvery, logf: logf, stop: make(chan struct{}), done: make(chan struct{})}
	if os.MkdirAll(markers, 0o700) != nil {
		markers = dir // learn's own directory cannot be made: the marker goes beside the summary
	}
	k.marker = filepath.Join(markers, fmt.Sprintf("learn-workshop-%s-%d.running", started.Format("2006-01-02-150405"), os.Getpid()))
	k.lock = flock.New(k.marker)
	if ok, err := k.lock.TryLock(); err != nil || !ok {
		return nil, fmt.Errorf("cannot mark where the room's summary is kept, in %s: %v; pass --summary-dir with a directory you can write", markers, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(k.marker)
			_ = k.lock.Unlock()
		}
	}()
	data, err := json.Marshal(marker{Summary: path, PID: os.Getpid(), Started: started})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(k.marker, data, 0o600); err != nil {
		return nil, fmt.Errorf("cannot mark where the room's summary is kept, in %s: %w", markers, err)
	}
	if err := k.write(); err != nil {
		return nil, err
	}
	go k.loop()
	return k, nil
}

// write writes the room's summary as it stands now.
func (k *keeper) write() error {
	s := k.room.Summary(time.Time{})
	s.Saved = time.Now()
	return writeSummaryFile(k.path, s)
}

// loop writes the summary after each change of the room, at most every
// k.every, until stop.
func (k *keeper) loop() {
	defer close(k.done)
	defer func() {
		if r := recover(); r != nil { // a bug here must not end the workshop: the summary is still written at the end
			k.logf("keeping the room's summary stopped on a bug (%v); it is written at the end all the same", r)
		}
	}()
	pause := time.NewTimer(k.every)
	pause.Stop()
	defer pause.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-k.room.SummaryChanged():
		}
		switch err := k.write(); {
		case err != nil && !k.failed:
			k.failed = true
			k.logf("cannot keep the room's summary in %s as it changes (%v); it is tried again at the next change, and at the end", k.path, err)
		case err == nil && k.failed:
			k.failed = false
			k.logf("the room's summary is kept in %s again", k.path)
		}
		pause.Reset(k.every)
		select {
		case <-k.stop:
			return
		case <-pause.C:
		}
	}
}

// finish stops keeping and writes the summary a last time, ended; the
// marker goes, whatever the write did (this process says where the
// summary went).
func (k *keeper) finish(s room.Summary) error {
	close(k.stop)
	<-k.done
	s.Saved = s.Ended
	err := writeSummaryFile(k.path, s)
	_ = os.Remove(k.marker)
	_ = k.lock.Unlock()
	return err
}

// discard stops keeping and removes what the keeper made: the summary's
// file and the marker (a workshop that failed to start has no summary).
func (k *keeper) discard() {
	close(k.stop)
	<-k.done
	_ = os.Remove(k.path)
	_ = os.Remove(k.marker)
	_ = k.lock.Unlock()
}

// KeptSummary is a room's summary on disk that a workshop keeps now
// (Running) or left when it never ended.
type KeptSummary struct {
	Path    string
	PID     int
	Started time.Time
	Running bool
	// Saved is when the summary was last written, and Attendees how many
	// it holds; both zero when the file cannot be read (Err says why).
	Saved     time.Time
	Attendees int
	Err       error
}

// String says where the summary is, for people.
func (k KeptSummary) String() string {
	started := k.Started.Local().Format("2006-01-02 15:04:05")
	if k.Running {
		return fmt.Sprintf("the workshop running now (process %d, started %s) keeps the room's summary in %s", k.PID, started, k.Path)
	}
	if k.Err != nil {
		return fmt.Sprintf("the workshop started %s did not end (killed, crashed or a power cut); its room's summary was kept in %s, which cannot be read now: %v", started, k.Path, k.Err)
	}
	return fmt.Sprintf("the workshop started %s did not end (killed, crashed or a power cut); its room's summary, as kept at %s (%s), is in %s",
		started, k.Saved.Local().Format("15:04:05"), common.Count(k.Attendees, "attendee"), k.Path)
}

// KeptSummaries lists the summaries the markers in dir name: those of
// workshops running now, and those of workshops that never ended, whose
// markers it then removes (each is said once). dir that does not exist
// holds none.
func KeptSummaries(dir string) ([]KeptSummary, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "learn-workshop-*.running"))
	if err != nil {
		return nil, err
	}
	var out []KeptSummary
	for _, p := range paths {
		lk := flock.New(p)
		ok, err := lk.TryLock()
		if err != nil {
			continue // gone meanwhile, or not ours to read
		}
		data, rerr := os.ReadFile(p)
		var m marker
		if rerr != nil || json.Unmarshal(data, &m) != nil || m.Summary == "" {
			if ok && rerr == nil { // locked by none, and not a marker: an empty file the lock made, or debris
				_ = os.Remove(p)
			}
			if ok {
				_ = lk.Unlock()
			}
			continue
		}
		k := KeptSummary{Path: m.Summary, PID: m.PID, Started: m.Started, Running: !ok}
		if s, err := readSummary(m.Summary); err != nil {
			k.Err = err
		} else {
			k.Saved, k.Attendees = s.Saved, len(s.Attendees)
		}
		if ok { // its workshop has gone: said now, once
			_ = os.Remove(p)
			_ = lk.Unlock()
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b KeptSummary) int { return a.Started.Compare(b.Started) })
	return out, nil
}

// readSummary reads a summary file.
func readSummary(path string) (room.Summary, error) {
	var s room.Summary
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("not a summary: %w", err)
	}
	return s, nil
}
