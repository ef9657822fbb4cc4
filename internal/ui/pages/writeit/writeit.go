// Package writeit is the "Write it yourself" screen of learn exercises:
// the ladder of exercises with each one's state, the selected exercise's
// goal and its scorecard (learn check's rows: one judge), its hints one at
// a time, and Enter on a row for that scenario played live on the
// learner's code: held at each step (each try, each of the learner's
// statements before PostgreSQL gets it, each answer) with the rows
// committed meanwhile. It watches the module's files (fsnotify): each
// save builds the module again and runs the checks, and a build that
// fails shows what the compiler printed.
//
//   - writeit.go: the model, the check under way and the watch;
//   - play.go: a row played ([exercises.Play]), its steps and rows;
//   - view.go: the drawing (the ladder, the goal).
package writeit

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/fsnotify/fsnotify"

	"github.com/learn-idempotency/learn/exercises"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim/check"
)

// Model is the screen of the exercises in one directory.
type Model struct {
	c   *common.Common
	dir string
	// err is what went wrong outside a check: the directory not
	// writable, the watch not started.
	err error
	// present says the directory holds the module (look).
	present bool

	// The check on screen: run counts the checks started, and messages
	// of any other are stale.
	run     int
	cancel  context.CancelFunc
	running bool
	phase   string
	rows    map[string][]check.Row // by exercise, the rows of the check under way, as they come
	rep     *exercises.Report
	// stoppedAt is the phase a check on screen that ran nothing stopped
	// at ("building", …), and lastRan the last report whose checks ran.
	stoppedAt string
	lastRan   *exercises.Report
	runErr    error
	began     time.Time
	checked   time.Time // when the report on screen was made

	// The watch: saves counts the saves seen, so that only the last of a
	// burst (an editor writes a file in several steps) starts a check.
	watcher *fsnotify.Watcher
	saves   int
	events  chan struct{}

	// The cursor: the exercise selected, and its row under the cursor
	// (-1: the exercise itself); moved says the learner moved it.
	sel, row int
	moved    bool
	// shown is the explanation's scrolling as View last drew it, for the
	// footer (which names the scroll keys only when it does not fit).
	shown scrolling
	// detailScroll is the first line of the detail on screen (the goal,
	// the hints, the verdict), when it does not fit.
	detailScroll int
	// play is the cursor's row played live on the learner's code (nil:
	// none); plays counts the plays opened, so that messages of another
	// are stale.
	play  *playView
	plays int
}

// New is the screen of the exercises in dir.
func New(c *common.Common, dir string) *Model {
	return &Model{c: c, dir: dir, row: -1}
}

// Messages of the screen; run says which check each is about.
type (
	phaseMsg struct {
		run   int
		phase string
	}
	rowMsg struct {
		run      int
		exercise string
		row      check.Row
	}
	doneMsg struct {
		run int
		rep *exercises.Report
		err error
	}
	dbMsg      struct{ run int }
	saveMsg    struct{}
	settledMsg struct{ saves int }
	initMsg    struct{ err error }
)

// look finds out again whether dir holds the exercises' module (present):
// on start, after a write and on every event of the watch, never while
// drawing.
func (m *Model) look() { m.present = exercises.Exists(m.dir) == nil }

// Init starts the watch and the first check, when the module is there.
func (m *Model) Init() tea.Cmd {
	m.look()
	if !m.present {
		return nil
	}
	return tea.Batch(m.watch(), m.start(), m.remember())
}

// remember saves the module's directory, as an absolute path, with the
// progress: the app opens it when given none.
func (m *Model) remember() tea.Cmd {
	abs, err := filepath.Abs(m.dir)
	if err != nil || m.c.Progress.Get().ExercisesDir == abs {
		return nil
	}
	return m.c.Progress.Save(func(p *progress.Progress) { p.ExercisesDir = abs })
}

// Title names the page.
func (m *Model) Title() string { return "Write it yourself" }

// Stand is the exercises' screen: a place to come back to.
func (m *Model) Stand() common.Stand {
	at := progress.Place{Page: progress.PageExercises}
	return common.Stand{At: at, Reopens: true, Next: at}
}

// Close stops the check under way, the play and the watch.
func (m *Model) Close() {
	m.closePlay()
	if m.cancel != nil {
		m.cancel()
	}
	if m.watcher != nil {
		_ = m.watcher.Close()
		m.watcher = nil
	}
}

// watch starts watching the module's directory; every write, create or
// rename of a file of the module is a save.
func (m *Model) watch() tea.Cmd {
	if m.watcher != nil {
		return nil // watching already (the module written again: the parent's watch saw it)
	}
	w, err := fsnotify.NewWatcher()
	if err == nil {
		err = w.Add(m.dir)
	}
	if err == nil {
		// The parent too: a module removed and written again is watched
		// again once it is back.
		err = w.Add(filepath.Dir(filepath.Clean(m.dir)))
	}
	if err != nil {
		m.err = err
		if w != nil {
			_ = w.Close()
		}
		return nil
	}
	m.watcher, m.events = w, make(chan struct{}, 1)
	events := m.events
	go func() {
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					close(events)
					return
				}
				if filepath.Clean(ev.Name) == filepath.Clean(m.dir) {
					if ev.Has(fsnotify.Create) {
						_ = w.Add(m.dir) // back: watched again, and checked
					}
					// Gone or back: the screen looks again.
				} else if filepath.Dir(ev.Name) != filepath.Clean(m.dir) || ev.Has(fsnotify.Chmod) && !ev.Has(fsnotify.Write) || !moduleFile(ev.Name) {
					continue
				}
				select {
				case events <- struct{}{}:
				default: // a save is waiting to be told already
				}
			case _, ok := <-w.Errors:
				if !ok {
					close(events)
					return
				}
			}
		}
	}()
	return m.waitSave()
}

// moduleFile reports whether a file the watch saw is one of the module's
// own: its Go files, schema.sql and go.mod, never an editor's swap or
// backup file, nor what the build writes.
func moduleFile(name string) bool {
	base := filepath.Base(name)
	if strings.HasPrefix(base, ".") || strings.HasSuffix(base, "~") {
		return false
	}
	return strings.HasSuffix(base, ".go") || base == "schema.sql" || base == "go.mod"
}

func (m *Model) waitSave() tea.Cmd {
	events := m.events
	return func() tea.Msg {
		if _, ok := <-events; !ok {
			return nil
		}
		return saveMsg{}
	}
}

// settle is how long a burst of saves has to be quiet before the check
// starts: one save of an editor is several writes and renames.
const settle = 150 * time.Millisecond

// start starts a check of the module, once the database is up; the check
// under way, if any, is stopped.
func (m *Model) start() tea.Cmd {
	if m.cancel != nil {
		m.cancel()
	}
	m.run++
	m.look()
	if !m.present {
		m.running = false
		return nil
	}
	m.running, m.rows, m.runErr, m.began = true, map[string][]check.Row{}, nil, time.Now()
	run := m.run
	srv := m.c.DB.Server()
	if srv == nil {
		m.phase = "waiting for PostgreSQL"
		done := m.c.DB.Done()
		return func() tea.Msg {
			<-done
			return dbMsg{run: run}
		}
	}
	if _, _, err := m.c.DB.Status(); err != nil {
		m.running, m.runErr = false, err
		return nil
	}
	ctx, cancel := context.WithCancel(m.c.Ctx)
	m.cancel, m.phase = cancel, "building"
	msgs := make(chan tea.Msg, 64)
	go func() {
		defer close(msgs)
		rep, err := exercises.Check(ctx, m.dir, srv, exercises.Options{
			Phase: func(p string) { msgs <- phaseMsg{run: run, phase: p} },
			Done:  func(id string, r check.Row) { msgs <- rowMsg{run: run, exercise: id, row: r} },
		})
		if ctx.Err() != nil {
			return // stopped: a newer check or the screen's end
		}
		msgs <- doneMsg{run: run, rep: rep, err: err}
	}()
	return next(msgs)
}

// next waits for the check's next message.
func next(msgs chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		msg, ok := <-msgs
		if !ok {
			return nil
		}
		return chained{msg: msg, more: next(msgs)}
	}
}

// chained is a check's message, and the wait for the one after.
type chained struct {
	msg  tea.Msg
	more tea.Cmd
}

// Update takes the check's messages, the saves, and the keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.updatePlay(msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case chained:
		return tea.Batch(m.Update(msg.msg), msg.more)
	case phaseMsg:
		if msg.run == m.run {
			m.phase = msg.phase
		}
	case rowMsg:
		if msg.run == m.run {
			m.rows[msg.exercise] = append(m.rows[msg.exercise], msg.row)
		}
	case doneMsg:
		if msg.run != m.run {
			return nil
		}
		m.running, m.runErr = false, msg.err
		if msg.err == nil {
			first := m.rep == nil
			if m.rep != nil && m.rep.Stopped == "" {
				m.lastRan = m.rep
			}
			m.stoppedAt = m.phase
			m.rep, m.checked = msg.rep, time.Now()
			if first && !m.moved {
				// The screen opens on the exercise the learner is on.
				if i := slices.IndexFunc(exercises.Ladder, func(e exercises.Exercise) bool { return e.ID == msg.rep.Current }); i >= 0 {
					m.sel, m.row = i, -1
				}
			}
			return m.save(msg.rep)
		}
	case dbMsg:
		if msg.run == m.run {
			return m.start()
		}
	case saveMsg:
		m.saves++
		n := m.saves
		return tea.Batch(m.waitSave(), tea.Tick(settle, func(time.Time) tea.Msg { return settledMsg{saves: n} }))
	case settledMsg:
		if msg.saves == m.saves {
			return m.start()
		}
	case initMsg:
		m.err = msg.err
		m.look()
		if msg.err == nil {
			return tea.Batch(m.watch(), m.start(), m.remember())
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

// save keeps each exercise's state with the progress.
func (m *Model) save(rep *exercises.Report) tea.Cmd {
	if rep.Stopped != "" {
		return nil
	}
	now := common.Now()
	return m.c.Progress.Save(func(p *progress.Progress) { rep.Record(p, now) })
}

// key moves the cursor, opens a row to play it, asks for a hint, checks
// again, and writes the module when it is missing.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.Back):
		return common.BackCmd
	case !m.present:
		if key.Matches(msg, keyInit) {
			dir := m.dir
			return func() tea.Msg { return initMsg{err: exercises.Write(dir, false)} }
		}
	case key.Matches(msg, k.Up):
		m.move(-1)
		m.moved, m.detailScroll = true, 0
	case key.Matches(msg, k.Down):
		m.move(1)
		m.moved, m.detailScroll = true, 0
	case key.Matches(msg, k.PageDown):
		if _, sc := m.ladderView(m.c.Width, m.c.Body()); sc.most > 0 {
			m.detailScroll = min(max(m.detailScroll, 0)+max(sc.page-1, 1), sc.most)
		}
	case key.Matches(msg, k.PageUp):
		if _, sc := m.ladderView(m.c.Width, m.c.Body()); sc.most > 0 {
			m.detailScroll = max(min(m.detailScroll, sc.most)-max(sc.page-1, 1), 0)
		}
	case key.Matches(msg, k.Open):
		return m.openPlay()
	case key.Matches(msg, keyHint):
		// The exercise the learner is on, wherever the cursor is: the
		// cursor goes to it, where its hints are shown.
		i := m.hintFor()
		if i != m.sel {
			m.sel, m.row = i, -1
		}
		m.detailScroll = 0
		id, most := exercises.Ladder[i].ID, len(exercises.Ladder[i].Hints)
		return m.c.Progress.Save(func(p *progress.Progress) { p.TakeHint(id, most) })
	case key.Matches(msg, keyCheck):
		return m.start()
	}
	return nil
}

// hintFor is the index of the exercise h gives a hint of: the one the
// learner is on (← now), or, once every one passes, the cursor's.
func (m *Model) hintFor() int {
	if i := slices.IndexFunc(exercises.Ladder, func(e exercises.Exercise) bool { return e.ID == m.current() }); i >= 0 {
		return i
	}
	return m.sel
}

// move moves the cursor over the exercises and the selected one's rows.
func (m *Model) move(d int) {
	rows := len(m.rowsOf(m.sel))
	switch {
	case d > 0 && m.row+1 < rows:
		m.row++
	case d > 0 && m.sel+1 < len(exercises.Ladder):
		m.sel, m.row = m.sel+1, -1
	case d < 0 && m.row >= 0:
		m.row--
	case d < 0 && m.sel > 0:
		m.sel = m.sel - 1
		m.row = len(m.rowsOf(m.sel)) - 1
	}
}

// rowsOf are exercise i's rows: the report's, or, while a check runs,
// those already in.
func (m *Model) rowsOf(i int) []check.Row {
	if m.running && len(m.rows) > 0 || m.rep == nil {
		return m.rows[exercises.Ladder[i].ID]
	}
	if i < len(m.rep.Exercises) {
		return m.rep.Exercises[i].Rows
	}
	return nil
}
