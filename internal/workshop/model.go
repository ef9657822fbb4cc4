package workshop

import (
	"runtime/debug"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/ui"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
)

// attendeeApp is one attendee's learn: the app's root (the same as in a
// local terminal) with what a session adds around it. It tells the room
// where the attendee is, their window size and their answers; it takes
// what the presenter sends (a screen to open, a step, the end); it ends
// the session after idle without a key; and it switches to the light
// theme when the attendee's terminal says its background is light.
type attendeeApp struct {
	root   *ui.Model
	c      *common.Common
	seat   *room.Seat
	getenv func(string) string // the session's environment

	idle      time.Duration
	lastInput time.Time
	now       func() time.Time
	// stopped is closed once the program has ended: the commands that
	// wait (the idle clock) return then, so nothing of an ended session
	// is kept until they would have fired.
	stopped <-chan struct{}
	// themeSet is true when the session named its theme (LEARN_THEME):
	// the terminal's background is not asked then.
	themeSet bool

	// onBug is told of a bug (a panic) in the app, with its stack: this
	// session ends, and nothing else does.
	onBug func(bug any, stack []byte)
	// quit ends the program from outside (after a bug in View, which
	// returns no command).
	quit func()
	// hook, when set, is called with every message and (nil) every frame
	// before the app sees them (tests: it may panic).
	hook func(msg tea.Msg)

	mu  sync.Mutex
	why ending // why the app ended, when not by the attendee's own q
	bug any    // the panic that ended it (endedBug)
}

// ending says why an attendee's app ended, for the line printed after it.
type ending int

const (
	endedByAttendee ending = iota
	endedIdle
	endedWorkshop
	endedReplaced // the same person opened learn in a newer session
	endedBug      // the app panicked: learn's bug
)

// Messages of an attendee's app.
type (
	// endMsg ends the app: the workshop ends.
	endMsg struct{}
	// replacedMsg ends the app: the same person opened learn in a newer
	// session (people.go).
	replacedMsg struct{}
	// idleMsg checks whether the attendee has been idle too long.
	idleMsg struct{}
	// presenterMsg is what the presenter sent the room (common.Open,
	// common.Step), as the room delivers it.
	presenterMsg struct{ msg any }
)

// Init starts the app, asks the terminal its background (an answer that
// never comes changes nothing), and starts the idle clock.
func (a *attendeeApp) Init() tea.Cmd {
	cmds := []tea.Cmd{a.root.Init(), a.idleCheck(a.idle)}
	if !a.themeSet {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

// idleCheck is the idle clock: an idleMsg after after, unless the
// program has ended first (then nothing, at once). Not tea.Tick, which
// cannot be stopped: its goroutine, and through it the whole program,
// would outlive the session for the idle time.
func (a *attendeeApp) idleCheck(after time.Duration) tea.Cmd {
	if a.idle <= 0 {
		return nil
	}
	stopped := a.stopped
	return func() tea.Msg {
		t := time.NewTimer(after)
		defer t.Stop()
		select {
		case <-t.C:
			return idleMsg{}
		case <-stopped:
			return nil
		}
	}
}

// Update handles what is the session's and passes the rest to the app,
// then tells the room where the attendee is. A panic in it (a bug of
// learn's) ends this session, with a line that says so, and is told
// onBug; every other session goes on.
func (a *attendeeApp) Update(msg tea.Msg) (m tea.Model, cmd tea.Cmd) {
	if a.broken() {
		return a, tea.Quit
	}
	defer func() {
		if r := recover(); r != nil {
			m, cmd = a, a.crashed(r)
		}
	}()
	if a.hook != nil {
		a.hook(msg)
	}
	return a.update(msg)
}

// crashed records the bug r and ends the app without touching its pages
// again (they may be what broke).
func (a *attendeeApp) crashed(r any) tea.Cmd {
	a.mu.Lock()
	first := a.bug == nil
	if first {
		a.why, a.bug = endedBug, r
	}
	a.mu.Unlock()
	if first && a.onBug != nil {
		a.onBug(r, debug.Stack())
	}
	return tea.Quit
}

// broken reports whether the app has hit a bug.
func (a *attendeeApp) broken() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bug != nil
}

func (a *attendeeApp) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case endMsg:
		return a, a.end(endedWorkshop)
	case replacedMsg:
		return a, a.end(endedReplaced)
	case idleMsg:
		if quiet := a.now().Sub(a.lastInput); quiet < a.idle {
			return a, a.idleCheck(a.idle - quiet)
		}
		return a, a.end(endedIdle)
	case tea.KeyPressMsg, tea.MouseMsg, tea.PasteMsg:
		a.lastInput = a.now()
	case tea.BackgroundColorMsg:
		if a.themeSet || msg.IsDark() == (a.c.Theme != "light") {
			return a, nil
		}
		theme := "dark"
		if !msg.IsDark() {
			theme = "light"
		}
		a.root.SetTheme(theme, markdown.StyleIn(theme, false, a.getenv))
		w, h := a.c.Width, a.c.Height
		return a, func() tea.Msg { return tea.WindowSizeMsg{Width: w, Height: h} } // pages render again
	case common.Answered:
		a.seat.Answered(msg.Set, msg.Question, msg.Picks, msg.Score)
		return a, nil
	case presenterMsg:
		o, ok := msg.msg.(common.Open)
		if !ok {
			return a.update(msg.msg) // a step: as the attendee's own n
		}
		if common.SameScreen(a.root.Current(), o.Place) {
			return a, nil // there already
		}
		// The presenter's screen replaces the attendee's pages: those
		// left under it would hold their runs (and connections) unseen.
		home := a.root.Home()
		_, open := a.root.Update(o)
		a.seat.Where(a.root.Where())
		return a, tea.Batch(home, open)
	}
	_, cmd := a.root.Update(msg)
	a.seat.Where(a.root.Where())
	return a, cmd
}

// end ends the app after an empty last frame, saying why.
func (a *attendeeApp) end(why ending) tea.Cmd {
	a.mu.Lock()
	a.why = why
	a.mu.Unlock()
	a.root.Quitting()
	return tea.Quit
}

// ended is why the app ended; endedByAttendee unless it was ended.
func (a *attendeeApp) ended() ending {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.why
}

// bugView is the frame of an app that hit a bug, until it has ended.
const bugView = "learn hit a bug and this session ends; your progress is kept: ssh again to go on."

// View is the app's; after a bug (a panic here too), bugView, and the
// program is ended.
func (a *attendeeApp) View() (v tea.View) {
	if a.broken() {
		return tea.NewView(bugView)
	}
	defer func() {
		if r := recover(); r != nil {
			a.crashed(r)
			if a.quit != nil {
				go a.quit()
			}
			v = tea.NewView(bugView)
		}
	}()
	if a.hook != nil {
		a.hook(nil)
	}
	return a.root.View()
}
