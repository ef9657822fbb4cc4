// Package ui is learn's terminal app: the root model (Model) that keeps a
// stack of pages and routes messages, and Run, which runs it in the local
// terminal (AppGC sets the app's process's garbage collection target
// first). Preview is the app's first frame drawn without starting
// anything, and FirstFrame puts it on the terminal for the crash
// supervisor while the app's process starts (preview.go). The pages are
// in ui/pages, what they share in ui/common, the pieces they draw with in
// ui/components. The same Model serves an SSH session of a workshop:
// everything per terminal is in its common.Common.
package ui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/footer"
	"github.com/learn-idempotency/learn/internal/ui/pages/drill"
	"github.com/learn-idempotency/learn/internal/ui/pages/home"
	"github.com/learn-idempotency/learn/internal/ui/pages/lab"
	"github.com/learn-idempotency/learn/internal/ui/pages/picker"
	"github.com/learn-idempotency/learn/internal/ui/pages/play"
	"github.com/learn-idempotency/learn/internal/ui/pages/quizset"
	"github.com/learn-idempotency/learn/internal/ui/pages/race"
	"github.com/learn-idempotency/learn/internal/ui/pages/reader"
	"github.com/learn-idempotency/learn/internal/ui/pages/writeit"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// entry is a page on the stack with its identity, which addresses the
// messages of its commands.
type entry struct {
	id   int
	page common.Page
}

// Model is the root: it keeps the stack of pages (home at the bottom, the
// page on screen on top), gives keys to the page on top and every message of
// a page's command back to that page, handles the keys that work everywhere
// (quit, ?, presenter mode), draws the footer and the ? overlay, and sets the
// alternate screen.
type Model struct {
	c        *common.Common
	stack    []entry
	lastID   int
	help     help.Model
	showHelp bool
	notice   string  // shown in place of the footer until the next key (common.Notice)
	quitting bool    // the last frame is empty: nothing of the app is left on screen
	firstCmd tea.Cmd // what the first pages need to start
}

// New builds the app on c showing first on top of the home page. It never
// reopens the last screen by itself: the home page offers it ("Resume: …")
// as its first entry.
func New(c *common.Common, first common.Open) *Model {
	m := NewWith(c, home.New(c))
	if first.Page != progress.PageHome {
		m.firstCmd = tea.Batch(m.firstCmd, m.open(first))
	}
	return m
}

// NewWith builds the app on c with base at the bottom of the stack instead
// of the home page: Esc from the pages opened over it comes back to it. A
// workshop's presenter gets the dashboard so.
func NewWith(c *common.Common, base common.Page) *Model {
	h := help.New()
	h.Styles = c.Styles.HelpStyles()
	m := &Model{c: c, help: h}
	cmds := []tea.Cmd{m.push(base)}
	if c.Present {
		cmds = append(cmds, clockTick())
	}
	m.firstCmd = tea.Batch(cmds...)
	return m
}

// SetTheme switches the app to theme ("dark" or "light") with Glamour style
// docStyle, e.g. once a terminal over SSH has said its background is light;
// the next frame is drawn with it. Pages that render with the old style
// again when the window size comes, so send one.
func (m *Model) SetTheme(theme, docStyle string) {
	m.c.Theme, m.c.DocStyle = theme, docStyle
	m.c.Styles = common.NewStyles(theme != "light")
	m.help.Styles = m.c.Styles.HelpStyles()
}

// Home closes every page above the bottom one (the home page, or NewWith's
// base), as Esc on each would: their live runs stop.
func (m *Model) Home() tea.Cmd {
	var cmd tea.Cmd
	for len(m.stack) > 1 {
		cmd = m.back()
	}
	return cmd
}

// Where is the page on screen: its title, in words, and the place it
// stands at (common.Stand's At), which says which screen it is.
func (m *Model) Where() (title string, at progress.Place) {
	p := m.top().page
	return p.Title(), p.Stand().At
}

// Current is the place on screen when opening it gives this screen back,
// else the zero Place (a quiz set's summary, a play screen under a design
// of the lab: what is on screen is then no page the presenter sends).
func (m *Model) Current() progress.Place {
	if s := m.top().page.Stand(); s.Reopens {
		return s.At
	}
	return progress.Place{}
}

// build makes the page o names: the one place that knows every page.
func (m *Model) build(o common.Open) (common.Page, error) {
	switch o.Page {
	case progress.PageReader:
		p, err := lessons.Get(o.Name)
		if err != nil {
			return nil, err
		}
		return reader.New(m.c, p, o.Section), nil
	case progress.PagePlay:
		s, err := sim.Lookup(o.Name)
		if err != nil {
			return nil, err
		}
		if o.Design != nil {
			return play.WithDesign(m.c, s, *o.Design), nil
		}
		return play.New(m.c, s, sim.Variant(o.Variant)), nil
	case progress.PagePicker:
		return picker.New(m.c), nil
	case progress.PageRace:
		return race.New(m.c), nil
	case progress.PageQuiz:
		for _, s := range quiz.Sets() {
			if s.ID == o.Name {
				if o.Exact {
					return quizset.At(m.c, s, o.Step), nil
				}
				return quizset.New(m.c, s, o.Step), nil
			}
		}
		return nil, fmt.Errorf("no quiz set %q", o.Name)
	case progress.PageDrill:
		return drill.New(m.c, o.Step), nil
	case progress.PageLab:
		return lab.New(m.c), nil
	case progress.PageExercises:
		if m.c.ExercisesDir == "" {
			return nil, errors.New(common.NoExercises)
		}
		return writeit.New(m.c, m.c.ExercisesDir), nil
	}
	return nil, fmt.Errorf("no page %q", o.Page)
}

// push puts p on top and starts it.
func (m *Model) push(p common.Page) tea.Cmd {
	m.lastID++
	m.stack = append(m.stack, entry{id: m.lastID, page: p})
	return address(m.lastID, p.Init())
}

// open puts the page o names on top; a name that does not exist (a renamed
// scenario in an old progress file, a presenter's typo) leaves the page on
// screen as it is and says so in place of the footer, with what to do.
func (m *Model) open(o common.Open) tea.Cmd {
	p, err := m.build(o)
	if err != nil {
		m.notice = fmt.Sprintf("Not opened (pick it from the home page): %v", err)
		return nil
	}
	return tea.Batch(m.push(p), m.remember())
}

// back closes the page on top; the home page stays.
func (m *Model) back() tea.Cmd {
	if len(m.stack) < 2 {
		return nil
	}
	closePage(m.top().page)
	m.stack = m.stack[:len(m.stack)-1]
	return m.remember()
}

func closePage(p common.Page) {
	if c, ok := p.(common.Closer); ok {
		c.Close()
	}
}

// Close closes every page (their live runs stop); the way out of the app.
func (m *Model) Close() {
	for i := len(m.stack) - 1; i >= 0; i-- {
		closePage(m.stack[i].page)
	}
}

func (m *Model) top() entry { return m.stack[len(m.stack)-1] }

// ResumePoint is where the learner left off, for the home page's resume
// entry now and at the next start: where the page on top continues when it
// is one to come back to (a lesson's section, a scenario, an unfinished
// quiz or drill at its next question), nothing when it says it is done (a
// finished quiz), else (home, the picker, the race, the lab, a scenario
// played under a design of the lab: Stand's Keep) the place saved before,
// kept.
func (m *Model) ResumePoint() progress.Place {
	if s := m.top().page.Stand(); !s.Keep {
		return s.Next
	}
	return m.c.Progress.Get().Resume
}

// SaveOnExit writes every queued change of the progress, then where the
// learner left off, before returning: the way out of the app, after the
// program has ended.
func (m *Model) SaveOnExit() error {
	at := m.ResumePoint()
	return m.c.Progress.Close(func(p *progress.Progress) { p.Resume = at })
}

// remember saves where the learner is.
func (m *Model) remember() tea.Cmd {
	at := m.ResumePoint()
	return m.c.Progress.Save(func(p *progress.Progress) { p.Resume = at })
}

// Init starts the first pages.
func (m *Model) Init() tea.Cmd { return m.firstCmd }

// tooSmall reports whether the window is below the app's minimum.
func (m *Model) tooSmall() bool {
	return m.c.Width < common.MinWidth || m.c.Height < common.MinHeight
}

// Update routes msg: an addressed message to its page, keys to the page on
// top after the global ones, window sizes to every page. Whatever the
// message changed of where the learner is (a design switched with v, a
// section scrolled to, the next question), the resume spot follows at once:
// a page closed with Esc leaves behind the place last shown, not the one it
// was opened at.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if _, saved := msg.(common.Saved); saved {
		return m, cmd // a save's result moves nobody
	}
	return m, tea.Batch(cmd, m.follow())
}

// follow saves the resume spot when the page on top now stands somewhere
// else than the spot saved; nil when nothing moved.
func (m *Model) follow() tea.Cmd {
	if m.ResumePoint() == m.c.Progress.Get().Resume {
		return nil
	}
	return m.remember()
}

// update is Update without following the resume spot.
func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case addressed:
		for _, e := range m.stack {
			if e.id == msg.to {
				return address(e.id, e.page.Update(msg.msg))
			}
		}
		return nil // its page is gone
	case tea.WindowSizeMsg:
		m.c.Width, m.c.Height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		cmds := make([]tea.Cmd, len(m.stack))
		for i, e := range m.stack {
			cmds[i] = address(e.id, e.page.Update(msg))
		}
		return tea.Batch(cmds...)
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg, tea.PasteStartMsg, tea.PasteEndMsg, tea.MouseMsg, tea.KeyReleaseMsg:
		if m.tooSmall() {
			return nil // as for keys: nothing happens that cannot be seen
		}
	case common.Open:
		return m.open(msg)
	case common.Back:
		return m.back()
	case common.Notice:
		m.notice = msg.Text
		return nil
	case common.Saved:
		m.c.Progress.Take(msg)
		return nil
	case common.Answered:
		return nil // for whoever runs the app (a workshop's session); no page's
	case clockMsg:
		if m.c.Present {
			return clockTick()
		}
		return nil
	}
	e := m.top()
	return address(e.id, e.page.Update(msg))
}

// key handles the keys that work everywhere, then gives the rest to the page
// on top.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	m.notice = ""
	k := m.c.Keys
	e := m.top()
	capturing := false
	if c, ok := e.page.(common.Capturer); ok {
		capturing = c.Capturing()
	}
	switch {
	case msg.String() == "ctrl+c", !capturing && key.Matches(msg, k.Quit):
		return m.quit()
	case m.tooSmall():
		return nil // nothing happens that cannot be seen
	case capturing:
	case m.showHelp:
		if key.Matches(msg, k.Help, k.Back) {
			m.showHelp = false
		}
		return nil
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return nil
	case key.Matches(msg, k.Present) && common.Presents(e.page):
		return m.setPresent(!m.c.Present)
	}
	return address(e.id, e.page.Update(msg))
}

// quit ends the program after one last, empty frame: the renderer may flush
// its final frame after leaving the alternate screen (seen after a resize),
// and an empty frame leaves nothing behind on the shell's screen.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

// Quitting marks the program as ending (a signal, or the SSH session
// closing): the next frame is the empty last one.
func (m *Model) Quitting() { m.quitting = true }

// clockMsg redraws the presenter's clock once a second.
type clockMsg struct{}

func clockTick() tea.Cmd { return tea.Tick(time.Second, func(time.Time) tea.Msg { return clockMsg{} }) }

// setPresent turns presenter mode on (starting its clock) or off.
func (m *Model) setPresent(on bool) tea.Cmd {
	m.c.Present = on
	if !on {
		return nil
	}
	m.c.PresentSince = time.Now()
	return clockTick()
}

// View draws the page on top in the window, with the footer, or the ?
// overlay, or a request for a larger window.
func (m *Model) View() tea.View {
	if m.quitting {
		v := tea.NewView("")
		v.AltScreen = true
		return v
	}
	top := m.top().page
	m.c.Presenting = m.c.Present && common.Presents(top)
	v := tea.NewView(m.content())
	v.AltScreen = true
	v.WindowTitle = "learn · " + top.Title()
	if common.WantsMouse(top) {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

func (m *Model) content() string {
	w, h := m.c.Width, m.c.Height
	if w == 0 || h == 0 {
		return ""
	}
	if m.tooSmall() {
		msg := fmt.Sprintf("make the window larger: learn needs at least %dx%d", common.MinWidth, common.MinHeight)
		return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, lipgloss.NewStyle().Width(min(w, 40)).Render(msg))
	}
	page := m.top().page
	if m.showHelp {
		return m.overlay(page.KeyMap())
	}
	lines := strings.Split(page.View(), "\n")
	room := m.c.Body()
	if len(lines) > room {
		lines = lines[:room]
	}
	for len(lines) < room {
		lines = append(lines, "")
	}
	if m.c.Presenting {
		return strings.Join(lines, "\n")
	}
	if m.notice != "" {
		return strings.Join(lines, "\n") + "\n" + m.c.Styles.Accent.Render(ansi.Truncate(m.notice, m.c.Width, "…"))
	}
	return strings.Join(lines, "\n") + "\n" + m.footer(page)
}

// footer is the page's key hints, most important first, then the keys that
// always show: back (when the page has it), help and quit (handled here for
// every page, unless the page's text box takes every key). It never runs
// past the window: what does not fit is left for the ? overlay, with "…".
func (m *Model) footer(page common.Page) string {
	k := m.c.Keys
	bindings := page.KeyMap().ShortHelp()
	has := func(b key.Binding) bool {
		return slices.ContainsFunc(bindings, func(p key.Binding) bool { return slices.Equal(p.Keys(), b.Keys()) })
	}
	if c, ok := page.(common.Capturer); !ok || !c.Capturing() {
		for _, b := range []key.Binding{k.Help, k.Quit} {
			if !has(b) {
				bindings = append(bindings, b)
			}
		}
	}
	pinned := func(b key.Binding) bool {
		return slices.Equal(b.Keys(), k.Back.Keys()) || slices.Equal(b.Keys(), k.Help.Keys()) || slices.Equal(b.Keys(), k.Quit.Keys())
	}
	return footer.View(m.c.Styles.HelpStyles(), bindings, m.c.Width, pinned)
}

// overlay is the full key help of the page, centred: in columns when they
// fit the window, else one key a line.
func (m *Model) overlay(keys help.KeyMap) string {
	st := m.c.Styles
	groups := keys.FullHelp()
	full := m.help.FullHelpView(groups)
	if lipgloss.Width(full) > m.c.Width-8 {
		var lines []string
		for _, g := range groups {
			for _, b := range g {
				if b.Enabled() {
					h := b.Help()
					lines = append(lines, st.Accent.Render(fmt.Sprintf("%-12s", h.Key))+" "+h.Desc)
				}
			}
		}
		full = strings.Join(lines, "\n")
	}
	var notes []string
	if n, ok := m.top().page.(common.HelpNoter); ok {
		notes = append(notes, n.HelpNotes()...)
	}
	if common.WantsMouse(m.top().page) {
		// The page takes the mouse: the terminal's own selection needs a
		// modifier (Shift in most terminals, Option in macOS's).
		notes = append(notes, "The mouse scrolls here: to select text to copy (the SQL),",
			"hold Shift while you drag (Option on macOS).")
	}
	closes := "? or esc closes, q quits"
	if m.c.Suspendable {
		closes += ", ctrl+z suspends (fg returns)"
	}
	notes = append(notes, closes)
	box := st.Box.Padding(0, 2).Render(st.Title.Render("Keys") + "\n\n" + full + "\n\n" + st.Subtle.Render(strings.Join(notes, "\n")))
	return lipgloss.Place(m.c.Width, m.c.Height, lipgloss.Center, lipgloss.Center, box)
}
