package common

import (
	"errors"
	"fmt"
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// Progress is the learner's progress as the pages show it, and the queue
// that writes each change to the progress file in the order the pages made
// them (two quick changes must not land the other way round). Without a
// store it is kept in memory only (a workshop attendee's, or where there is
// no state directory).
type Progress struct {
	store   *progress.Store
	keep    func(p *progress.Progress) // told of every change, when set
	p       *progress.Progress
	notices []string
	failed  string // the notice of the save failure shown, "" for none
	saver   *saver
	seq     int // number of the newest save
}

// LoadProgress loads the progress from its usual file (progress.DefaultPath).
// A file that cannot be read is moved aside by the store and said in the
// notices; without a state directory progress is kept in memory only.
func LoadProgress() *Progress {
	path, err := progress.DefaultPath()
	if err != nil {
		return &Progress{p: progress.NewProgress(), notices: []string{fmt.Sprintf("progress is not saved: %v", err)}}
	}
	return OpenProgress(&progress.Store{Path: path, Known: quiz.Known})
}

// OpenProgress loads the progress kept by store; nil keeps it in memory.
func OpenProgress(store *progress.Store) *Progress {
	if store == nil {
		return &Progress{p: progress.NewProgress()}
	}
	p, notices, err := store.Load()
	if err != nil {
		return &Progress{p: progress.NewProgress(), notices: append(notices, fmt.Sprintf("progress is not saved: %v", err))}
	}
	return &Progress{store: store, p: p, notices: notices}
}

// KeptProgress is progress kept in memory, starting from p (nil: none yet),
// whose every change is told to keep with the progress as it stands then
// (its UpdatedAt the time of the change, as a saved file has it);
// keep runs on the app's goroutine and must copy what it keeps. A
// workshop keeps each attendee's progress so, in the server.
func KeptProgress(p *progress.Progress, keep func(p *progress.Progress)) *Progress {
	if p == nil {
		p = progress.NewProgress()
	}
	return &Progress{p: p, keep: keep}
}

// ShowProgress holds p (nil: none) in memory, for a screen that only shows
// it: nothing is ever saved.
func ShowProgress(p *progress.Progress) *Progress {
	if p == nil {
		p = progress.NewProgress()
	}
	return &Progress{p: p}
}

// Get is the progress as it stands now, saved or not yet.
func (pr *Progress) Get() *progress.Progress { return pr.p }

// Notices are what the home screen must tell (a damaged file moved aside,
// a save that failed), each once: however many saves fail, and however
// often for the same cause, the list does not grow with them.
func (pr *Progress) Notices() []string { return pr.notices }

// Saved is the result of one save: the progress as saved (with whatever
// another learn process saved meanwhile), or why it could not be saved;
// seq orders the saves.
type Saved struct {
	p   *progress.Progress
	err error
	seq int
}

func (Saved) rootMsg() {}

// apply makes change to the progress on screen, and hands it to keep
// (the workshop's copy) as the store would have saved it: stamped.
func (pr *Progress) apply(change func(p *progress.Progress)) {
	change(pr.p)
	if pr.keep != nil {
		pr.p.UpdatedAt = Now().UTC().Round(0)
		pr.keep(pr.p)
	}
}

// Save applies change to the progress on screen at once and queues it for
// the file (locked, reread, written atomically); the result comes back to
// the root as a Saved message.
func (pr *Progress) Save(change func(p *progress.Progress)) tea.Cmd {
	pr.apply(change)
	if pr.store == nil {
		return nil
	}
	if pr.saver == nil {
		pr.saver = newSaver(pr.store)
	}
	pr.seq++
	job := saveJob{change: change, seq: pr.seq, reply: make(chan Saved, 1)}
	pr.saver.jobs <- job
	return func() tea.Msg { return <-job.reply }
}

// Take takes in a save's result: the newest save's progress replaces the
// one on screen; a failure becomes a notice, shown once. A progress file
// the learner made read-only is said in the words of Load's notice (so it
// is not said twice); any other failure replaces the one shown before, if
// any, for the newest cause is the one to fix.
func (pr *Progress) Take(msg Saved) {
	switch {
	case errors.Is(msg.err, progress.ErrReadOnly):
		pr.notice(msg.err.Error())
	case msg.err != nil:
		if pr.failed != "" { // the newest cause takes its place
			pr.notices = slices.DeleteFunc(pr.notices, func(n string) bool { return n == pr.failed })
			pr.failed = ""
		}
		if n := "progress not saved: " + msg.err.Error(); pr.notice(n) {
			pr.failed = n
		}
	case msg.p != nil && msg.seq == pr.seq:
		pr.p = msg.p
	}
}

// notice adds n unless it is shown already, and reports whether it did.
func (pr *Progress) notice(n string) bool {
	if slices.Contains(pr.notices, n) {
		return false
	}
	pr.notices = append(pr.notices, n)
	return true
}

// Close writes every queued change and then change, before returning: the
// way out of the app.
func (pr *Progress) Close(change func(p *progress.Progress)) error {
	if pr.saver != nil {
		pr.saver.close()
		pr.saver = nil
	}
	pr.apply(change)
	if pr.store == nil {
		return nil
	}
	_, err := pr.store.Update(func(p *progress.Progress) error { change(p); return nil })
	return err
}

// saver writes changes to the progress file one after another.
type saver struct {
	jobs chan saveJob
	done chan struct{}
}

type saveJob struct {
	change func(p *progress.Progress)
	seq    int
	reply  chan Saved
}

func newSaver(store *progress.Store) *saver {
	s := &saver{jobs: make(chan saveJob, 1024), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for j := range s.jobs {
			p, err := store.Update(func(p *progress.Progress) error { j.change(p); return nil })
			j.reply <- Saved{p: p, err: err, seq: j.seq}
		}
	}()
	return s
}

// close waits until every queued change is written.
func (s *saver) close() {
	close(s.jobs)
	<-s.done
}
