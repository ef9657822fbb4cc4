package main

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/quiz"
)

// progressMsg carries the progress as saved (with whatever another learn
// process saved meanwhile), or why it could not be saved; seq is the save's
// number, so that only the newest replaces the progress on screen.
type progressMsg struct {
	p   *quiz.Progress
	err error
	seq int
}

// openProgress loads the learner's progress. A file that cannot be read is
// moved aside by the store and reported in the notices; without a state
// directory learn goes on with progress kept in memory only.
func openProgress() (*quiz.Store, *quiz.Progress, []string) {
	path, err := quiz.DefaultPath()
	if err != nil {
		return nil, quiz.NewProgress(), []string{fmt.Sprintf("progress is not saved: %v", err)}
	}
	store := &quiz.Store{Path: path}
	p, notices, err := store.Load()
	if err != nil {
		return nil, quiz.NewProgress(), append(notices, fmt.Sprintf("progress is not saved: %v", err))
	}
	return store, p, notices
}

// saver writes changes to the progress file one after another, in the order
// the screens made them: two quick changes (25 s, then 20 s) must not land
// the other way round.
type saver struct {
	store *quiz.Store
	jobs  chan saveJob
	done  chan struct{}
}

type saveJob struct {
	change func(p *quiz.Progress)
	seq    int
	reply  chan progressMsg
}

func newSaver(store *quiz.Store) *saver {
	s := &saver{store: store, jobs: make(chan saveJob, 1024), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for j := range s.jobs {
			p, err := store.Update(func(p *quiz.Progress) error { j.change(p); return nil })
			j.reply <- progressMsg{p: p, err: err, seq: j.seq}
		}
	}()
	return s
}

// close waits until every queued change is written.
func (s *saver) close() {
	close(s.jobs)
	<-s.done
}

// save applies change to the progress on screen at once, and queues it for
// the file (locked, reread, written atomically); the saved progress comes
// back as a progressMsg.
func (c *common) save(change func(p *quiz.Progress)) tea.Cmd {
	change(c.prog)
	if c.store == nil {
		return nil
	}
	if c.saver == nil {
		c.saver = newSaver(c.store)
	}
	c.saveSeq++
	job := saveJob{change: change, seq: c.saveSeq, reply: make(chan progressMsg, 1)}
	c.saver.jobs <- job
	return func() tea.Msg { return <-job.reply }
}

// saved takes in a saved progress: the newest save's result replaces the
// progress on screen.
func (c *common) saved(msg progressMsg) {
	switch {
	case msg.err != nil:
		c.notices = append(c.notices, "progress not saved: "+msg.err.Error())
	case msg.p != nil && msg.seq == c.saveSeq:
		c.prog = msg.p
	}
}

// saveNow writes every queued change and then change, before returning; for
// the way out of the app.
func (c *common) saveNow(change func(p *quiz.Progress)) error {
	if c.saver != nil {
		c.saver.close()
		c.saver = nil
	}
	change(c.prog)
	if c.store == nil {
		return nil
	}
	_, err := c.store.Update(func(p *quiz.Progress) error { change(p); return nil })
	return err
}

// now is the time progress is stamped with.
func now() time.Time { return time.Now() }
