package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
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

// runProgress is `learn progress [reset|export]`: a summary of the saved
// progress, a reset after asking (or with --yes), or the file as JSON.
func runProgress(args []string, g *globals, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("progress", g)
	yes := fs.Bool("yes", false, "reset without asking")
	pos, err := parse(fs, args)
	if err != nil {
		return 2, err
	}
	if len(pos) > 1 {
		return 2, usageErrorf("progress takes at most one of reset or export, got %s", strings.Join(pos, " "))
	}
	path, err := quiz.DefaultPath()
	if err != nil {
		return 1, fmt.Errorf("no place to keep progress: %w (set XDG_STATE_HOME)", err)
	}
	store := &quiz.Store{Path: path}
	sub := ""
	if len(pos) == 1 {
		sub = pos[0]
	}
	switch sub {
	case "":
		p, notices, err := store.Load()
		for _, n := range notices {
			fmt.Fprintln(stderr, "learn:", n)
		}
		if err != nil {
			return 1, err
		}
		fmt.Fprintf(stdout, "Progress in %s\n\n%s", path, quiz.Summary(p, now()))
		return 0, nil
	case "export":
		return 0, store.Export(stdout)
	case "reset":
		if !*yes {
			if !isTerminal(stdin) {
				return 2, usageErrorf("progress reset asks first: answer at a terminal, or pass --yes")
			}
			fmt.Fprintf(stdout, "Forget everything in %s (pages read, scores, the drill's schedule)? [y/N] ", path)
			answer, _ := bufio.NewReader(stdin).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
				fmt.Fprintln(stdout, "Nothing changed.")
				return 0, nil
			}
		}
		if err := store.Reset(); err != nil {
			return 1, err
		}
		fmt.Fprintln(stdout, "Progress reset: learn starts over.")
		return 0, nil
	}
	return 2, usageErrorf("progress: unknown %q: use reset or export", sub)
}
