package main

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// Smallest window the app draws in.
const (
	minWidth  = 60
	minHeight = 20
)

// model is the root: it owns the window size, routes messages to the active
// screen, draws the help line and the ? overlay, and sets the alt screen.
type model struct {
	c        *common
	active   screenID
	home     *homeModel
	reader   *readerModel
	play     *playModel
	picker   *pickerModel
	race     *raceModel
	quiz     *quizModel
	drill    *drillModel
	help     help.Model
	showHelp bool
	quitting bool       // the last frame is empty: nothing of the app is left on screen
	stack    []screenID // the screens Esc goes back to
	firstCmd tea.Cmd    // what the first screen needs to start
}

// newModel builds the app showing first (home, reader or play, with name).
func newModel(c *common, first openMsg) *model {
	h := help.New()
	h.Styles = help.DefaultStyles(c.st.dark)
	m := &model{c: c, home: newHome(c), help: h}
	if first.screen == screenHome && !c.prog.Resume.IsZero() {
		// learn resumes where the learner left off; Esc goes home.
		if resumed, ok := resumeTarget(c.prog.Resume); ok {
			m.stack = []screenID{screenHome}
			first = resumed
		}
	}
	m.firstCmd = m.route(first)
	return m
}

// route switches to the screen msg names; an unknown name stays home.
func (m *model) route(msg openMsg) tea.Cmd {
	switch msg.screen {
	case screenReader:
		p, err := lessons.Get(msg.name)
		if err != nil {
			return nil
		}
		m.reader, m.active = newReader(m.c, p), screenReader
		m.reader.goTo = msg.section
		return tea.Batch(m.reader.Init(), m.remember(quiz.Resume{Screen: "reader", Name: p.Slug}))
	case screenPlay:
		s, err := sim.Lookup(msg.name)
		if err != nil {
			return nil
		}
		if m.play != nil {
			m.play.stopRun()
		}
		m.play, m.active = newPlay(m.c, s), screenPlay
		if msg.variant != "" && s.HasBroken() {
			m.play.variant = msg.variant
		}
		return tea.Batch(m.play.Init(), m.remember(quiz.Resume{Screen: "play", Name: s.Name, Section: string(m.play.variant)}))
	case screenPicker:
		if m.picker == nil {
			m.picker = newPicker(m.c)
		}
		m.active = screenPicker
		return nil
	case screenRace:
		if m.race == nil {
			m.race = newRace(m.c)
		}
		m.active = screenRace
		return nil
	case screenQuiz:
		set, ok := setByID(msg.name)
		if !ok {
			return nil
		}
		step := msg.step
		if sp, ok := m.c.prog.Sets[set.ID]; ok && step == 0 && sp.Next < len(set.Questions) {
			step = sp.Next // an unfinished attempt continues where it stopped
		}
		m.quiz, m.active = newQuiz(m.c, set, step), screenQuiz
		return tea.Batch(m.quiz.Init(), m.remember(quiz.Resume{Screen: "quiz", Name: set.ID, Step: m.quiz.idx}))
	case screenDrill:
		m.drill, m.active = newDrill(m.c), screenDrill
		return m.remember(quiz.Resume{Screen: "drill"})
	}
	m.active = screenHome
	return nil
}

func (m *model) Init() tea.Cmd {
	return tea.Batch(m.c.db.waitCmd(), m.home.Init(), m.firstCmd)
}

// remember saves where the learner is, for the next start to resume there.
func (m *model) remember(r quiz.Resume) tea.Cmd {
	return m.c.save(func(p *quiz.Progress) { p.Resume = r })
}

// resumeTarget is the screen a saved Resume opens.
func resumeTarget(r quiz.Resume) (openMsg, bool) {
	switch r.Screen {
	case "reader":
		return openMsg{screen: screenReader, name: r.Name, section: r.Section}, true
	case "play":
		return openMsg{screen: screenPlay, name: r.Name, variant: sim.Variant(r.Section)}, true
	case "quiz":
		return openMsg{screen: screenQuiz, name: r.Name, step: r.Step}, true
	case "drill":
		return openMsg{screen: screenDrill}, true
	}
	return openMsg{}, false
}

// resumePoint is where the learner is now.
func (m *model) resumePoint() quiz.Resume {
	switch m.active {
	case screenReader:
		return quiz.Resume{Screen: "reader", Name: m.reader.page.Slug, Section: m.reader.section()}
	case screenPlay:
		return quiz.Resume{Screen: "play", Name: m.play.scenario.Name, Section: string(m.play.variant)}
	case screenQuiz:
		if !m.quiz.done {
			return quiz.Resume{Screen: "quiz", Name: m.quiz.set.ID, Step: m.quiz.idx}
		}
	case screenDrill:
		if m.drill.phase != drillDone {
			return quiz.Resume{Screen: "drill"}
		}
	}
	return quiz.Resume{}
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
		if (msg.Width < minWidth || msg.Height < minHeight) && m.play != nil {
			m.play.playing = false // nothing plays unseen
		}
		m.help.SetWidth(msg.Width)
		if m.reader != nil {
			m.reader.SetSize(msg.Width, msg.Height)
		}
	case tea.KeyPressMsg:
		if msg.String() != "ctrl+c" && m.capturing() {
			break // a text box takes every key
		}
		switch {
		case msg.String() == "ctrl+c", key.Matches(msg, m.c.keys.Quit):
			return m, m.quit()
		case m.showHelp:
			if key.Matches(msg, m.c.keys.Help, m.c.keys.Back) {
				m.showHelp = false
			}
			return m, nil
		case key.Matches(msg, m.c.keys.Help):
			m.showHelp = true
			return m, nil
		case key.Matches(msg, m.c.keys.Present):
			return m, m.setPresent(!m.c.present)
		}
	case clockMsg:
		if m.c.present {
			return m, clockTick()
		}
		return m, nil
	case dbReadyMsg:
		m.c.dbReady, m.c.dbErr, m.c.dbTook, m.c.srv = msg.err == nil, msg.err, msg.took, msg.srv
		// Every screen that waits for the database hears of it.
		var cmds []tea.Cmd
		if m.play != nil {
			var cmd tea.Cmd
			m.play, cmd = m.play.Update(msg)
			cmds = append(cmds, cmd)
		}
		if m.quiz != nil {
			var cmd tea.Cmd
			m.quiz, cmd = m.quiz.Update(msg)
			cmds = append(cmds, cmd)
		}
		return m, tea.Batch(cmds...)
	case openMsg:
		m.stack = append(m.stack, m.active)
		return m, m.route(msg)
	case progressMsg:
		m.c.saved(msg)
		return m, nil
	case playVariantMsg:
		m.stack = append(m.stack, m.active)
		return m, m.route(openMsg{screen: screenPlay, name: msg.name, variant: msg.variant})
	case backMsg:
		m.active = screenHome
		if n := len(m.stack); n > 0 {
			m.active, m.stack = m.stack[n-1], m.stack[:n-1]
		}
		return m, m.remember(m.resumePoint())
	case renderedMsg:
		if m.reader != nil {
			var cmd tea.Cmd
			m.reader, cmd = m.reader.Update(msg)
			return m, cmd
		}
		return m, nil
	}
	return m, m.updateActive(msg)
}

func (m *model) updateActive(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch m.active {
	case screenHome:
		m.home, cmd = m.home.Update(msg)
	case screenReader:
		m.reader, cmd = m.reader.Update(msg)
	case screenPlay:
		// The play screen gets every message it started, whichever screen
		// is on top; others go to the active screen only.
		m.play, cmd = m.play.Update(msg)
	case screenPicker:
		m.picker, cmd = m.picker.Update(msg)
	case screenRace:
		m.race, cmd = m.race.Update(msg)
	case screenQuiz:
		m.quiz, cmd = m.quiz.Update(msg)
	case screenDrill:
		m.drill, cmd = m.drill.Update(msg)
	}
	if m.active != screenQuiz && m.quiz != nil {
		switch msg.(type) {
		case liveMsg:
			var qc tea.Cmd
			m.quiz, qc = m.quiz.Update(msg)
			cmd = tea.Batch(cmd, qc)
		}
	}
	if m.active != screenRace && m.race != nil {
		switch msg.(type) {
		case racePreparedMsg, raceEventMsg, raceDoneMsg:
			var rc tea.Cmd
			m.race, rc = m.race.Update(msg)
			cmd = tea.Batch(cmd, rc)
		}
	}
	if m.active != screenPlay && m.play != nil {
		switch msg.(type) {
		case traceMsg, rowsMsg, runPreparedMsg, runDoneMsg, advanceMsg:
			var pc tea.Cmd
			m.play, pc = m.play.Update(msg)
			cmd = tea.Batch(cmd, pc)
		}
	}
	return cmd
}

func (m *model) activeBindings() bindings {
	switch m.active {
	case screenReader:
		return m.reader.bindings()
	case screenPlay:
		return m.play.bindings()
	case screenPicker:
		return m.picker.bindings()
	case screenRace:
		return m.race.bindings()
	case screenQuiz:
		return m.quiz.bindings()
	case screenDrill:
		return m.drill.bindings()
	}
	return m.home.bindings()
}

// quit ends the program after one last, empty frame: the renderer may flush
// its final frame after leaving the alternate screen (seen after a resize),
// and an empty frame leaves nothing behind on the shell's screen.
func (m *model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

func (m *model) View() tea.View {
	if m.quitting {
		v := tea.NewView("")
		v.AltScreen = true
		return v
	}
	v := tea.NewView(m.content())
	v.AltScreen = true
	v.WindowTitle = "learn"
	return v
}

func (m *model) content() string {
	w, h := m.c.width, m.c.height
	if w == 0 || h == 0 {
		return ""
	}
	if w < minWidth || h < minHeight {
		msg := "make the window larger: learn needs at least 60x20"
		return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, lipgloss.NewStyle().Width(min(w, 40)).Render(msg))
	}
	var body string
	switch m.active {
	case screenReader:
		body = m.reader.View()
	case screenPlay:
		body = m.play.View()
	case screenPicker:
		body = m.picker.View()
	case screenRace:
		body = m.race.View()
	case screenQuiz:
		body = m.quiz.View()
	case screenDrill:
		body = m.drill.View()
	default:
		body = m.home.View()
	}
	if m.showHelp {
		return m.overlay()
	}
	lines := strings.Split(body, "\n")
	room := h - 1
	if m.c.present {
		room = h // no help line: chrome hidden
	}
	if len(lines) > room {
		lines = lines[:room]
	}
	for len(lines) < room {
		lines = append(lines, "")
	}
	if m.c.present {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines, "\n") + "\n" + m.help.ShortHelpView(m.activeBindings().ShortHelp())
}

// clockMsg redraws the presenter's clock once a second.
type clockMsg struct{}

func clockTick() tea.Cmd { return tea.Tick(time.Second, func(time.Time) tea.Msg { return clockMsg{} }) }

// setPresent turns presenter mode on (starting its clock) or off.
func (m *model) setPresent(on bool) tea.Cmd {
	m.c.present = on
	if !on {
		return nil
	}
	m.c.presentSince = time.Now()
	return clockTick()
}

// overlay is the full key help of the active screen, centred: in columns
// when they fit the window, else one key a line.
func (m *model) overlay() string {
	st := m.c.st
	groups := m.activeBindings().FullHelp()
	full := m.help.FullHelpView(groups)
	if lipgloss.Width(full) > m.c.width-8 {
		var lines []string
		for _, g := range groups {
			for _, b := range g {
				if b.Enabled() {
					h := b.Help()
					lines = append(lines, st.accent.Render(fmt.Sprintf("%-12s", h.Key))+" "+h.Desc)
				}
			}
		}
		full = strings.Join(lines, "\n")
	}
	box := st.box.Padding(0, 2).Render(st.title.Render("Keys") + "\n\n" + full + "\n\n" + st.subtle.Render("? or esc closes, q quits"))
	return lipgloss.Place(m.c.width, m.c.height, lipgloss.Center, lipgloss.Center, box)
}

// capturing reports whether the active screen's text box takes every key.
func (m *model) capturing() bool {
	switch m.active {
	case screenReader:
		return m.reader.capturing()
	case screenQuiz:
		return m.quiz.capturing()
	case screenDrill:
		return m.drill.capturing()
	}
	return false
}

// close stops whatever the screens still run; called after the program ends.
func (m *model) close() {
	if m.play != nil {
		m.play.close()
	}
	if m.race != nil {
		m.race.close()
	}
}
