// Package lab is the design lab: the booking endpoint as seven switches
// (where the key is looked up, the row lock, the constraint, the comparison,
// where the key lives, the client's key and its retries), a one-line
// explanation of the switch under the cursor, and "run all": every scenario
// runs against the composed design on PostgreSQL at once, and the
// scorecard fills in as they finish. Enter on a row plays that scenario
// step by step under the design; c opens the challenges.
package lab

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
	"github.com/learn-idempotency/learn/sim"
)

// focus is the part of the page that takes the arrows.
type focus int

const (
	onSwitches focus = iota
	onScorecard
	onChallenges
)

// Model is the design lab.
type Model struct {
	common.PresenterMode // the root hides the footer
	c                    *common.Common
	switches             []sim.Switch
	design               sim.Switches
	focus                focus
	cursor               int // the switch under the cursor
	row                  int // the scorecard row under the cursor
	chRow                int // the challenge under the cursor

	// The run on the scorecard.
	gen     int
	running bool
	cancel  context.CancelFunc
	ran     sim.Switches // the design the results are of
	results map[string]sim.LabResult
	card    *sim.Scorecard

	challenge *quiz.Challenge
	met       bool   // the challenge's goal is met by the last run
	why       string // what it still misses
	spin      spinner.Model
}

// Messages of the lab; gen ties each to its run.
type (
	resultMsg struct {
		gen int
		res sim.LabResult
		ch  <-chan sim.LabResult
	}
	doneMsg struct {
		gen  int
		card sim.Scorecard
	}
)

// New is the lab on the lesson's design, with no run yet.
func New(c *common.Common) *Model {
	return &Model{c: c, switches: sim.LabSwitches(), results: map[string]sim.LabResult{},
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot))}
}

// Init runs the lesson's design once, so the scorecard is not empty.
func (m *Model) Init() tea.Cmd { return m.runAll() }

// Title names the page.
func (m *Model) Title() string { return "Design lab" }

// Stand is the design lab, on screen: no place of its own to come
// back to, so the spot saved before stays.
func (m *Model) Stand() common.Stand {
	return common.Stand{At: progress.Place{Page: progress.PageLab}, Reopens: true, Keep: true}
}

// Close stops a run under way.
func (m *Model) Close() {
	if m.cancel != nil {
		m.cancel()
	}
}

// runAll runs every scenario against the design on screen.
func (m *Model) runAll() tea.Cmd {
	m.Close()
	m.gen++
	m.running, m.ran, m.results, m.card = true, m.design, map[string]sim.LabResult{}, nil
	ctx, cancel := context.WithCancel(m.c.Ctx)
	m.cancel = cancel
	gen, d, runs := m.gen, m.design, m.c.Runs
	ch := make(chan sim.LabResult, len(sim.Scenarios()))
	return tea.Batch(m.spin.Tick, waitResult(gen, ch), func() tea.Msg {
		card := runs.Lab(ctx, d, func(r sim.LabResult) { ch <- r })
		close(ch)
		return doneMsg{gen: gen, card: card}
	})
}

func waitResult(gen int, ch <-chan sim.LabResult) tea.Cmd {
	return func() tea.Msg {
		res, ok := <-ch
		if !ok {
			return nil
		}
		return resultMsg{gen: gen, res: res, ch: ch}
	}
}

// Update takes the keys, the results as they come, and the scorecard.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case resultMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.results[msg.res.Scenario] = msg.res
		return waitResult(msg.gen, msg.ch)
	case doneMsg:
		if msg.gen != m.gen {
			return nil
		}
		card := msg.card
		m.running, m.card = false, &card
		return m.check()
	case spinner.TickMsg:
		if !m.running {
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return cmd
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

// check holds the last run against the challenge, and saves a pass.
func (m *Model) check() tea.Cmd {
	if m.challenge == nil || m.card == nil {
		return nil
	}
	m.met, m.why = m.challenge.Goal(m.ran, *m.card)
	if !m.met {
		return nil
	}
	id := m.challenge.ID
	return m.c.Progress.Save(func(p *progress.Progress) { p.PassChallenge(id, common.Now()) })
}

// Keys of the lab beyond the shared ones.
var (
	change     = key.NewBinding(key.WithKeys("left", "right", "h", "l"), key.WithHelp("←/→", "change"))
	runAll     = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run all"))
	playRow    = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "play it"))
	startCh    = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "start the challenge"))
	nextPart   = key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "switches/scorecard"))
	challenges = key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "challenges"))
	// reset sets the switches back to where they started: the challenge's
	// design in a challenge (which goes on), the lesson's otherwise.
	reset = key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "start over"))
)

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.Back):
		if m.focus == onChallenges {
			m.focus = onSwitches
			return nil
		}
		return common.BackCmd
	case key.Matches(msg, nextPart):
		m.focus = map[focus]focus{onSwitches: onScorecard, onScorecard: onSwitches, onChallenges: onSwitches}[m.focus]
	case key.Matches(msg, challenges):
		m.focus = onChallenges
	case key.Matches(msg, reset):
		m.design = sim.Switches{}
		if m.challenge != nil {
			m.design = m.challenge.Start
		}
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(+1)
	case m.focus == onSwitches && key.Matches(msg, change):
		dir := +1
		if msg.String() == "left" || msg.String() == "h" {
			dir = -1
		}
		m.turn(dir)
	case key.Matches(msg, k.Open):
		switch m.focus {
		case onSwitches:
			return m.runAll()
		case onScorecard:
			d := m.ran
			name := sim.Scenarios()[m.row].Name
			return common.OpenCmd(common.Open{Place: progress.Place{Page: progress.PagePlay, Name: name}, Design: &d})
		case onChallenges:
			c := quiz.Challenges()[m.chRow]
			m.challenge, m.design, m.focus, m.met, m.why = &c, c.Start, onSwitches, false, ""
			return m.runAll()
		}
	}
	return nil
}

// move moves the cursor of the part in focus.
func (m *Model) move(d int) {
	wrap := func(i, n int) int { return (i + d + n) % n }
	switch m.focus {
	case onSwitches:
		m.cursor = wrap(m.cursor, len(m.switches))
	case onScorecard:
		m.row = wrap(m.row, len(sim.Scenarios()))
	case onChallenges:
		m.chRow = wrap(m.chRow, len(quiz.Challenges()))
	}
}

// turn sets the switch under the cursor to its next (dir +1) or previous
// value.
func (m *Model) turn(dir int) {
	sw := m.switches[m.cursor]
	i := 0
	for j, v := range sw.Values {
		if v == m.design.Get(sw.Name) {
			i = j
		}
	}
	next := sw.Values[(i+dir+len(sw.Values))%len(sw.Values)]
	if d, err := m.design.With(sw.Name, next); err == nil {
		m.design = d
	}
}

// KeyMap is the lab's keys, for the part in focus.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	var short []key.Binding
	switch m.focus {
	case onSwitches:
		// Most important first: the footer drops from the end.
		short = []key.Binding{change, runAll, nextPart, k.Up, k.Down, challenges}
	case onScorecard:
		short = []key.Binding{playRow, nextPart, k.Up, k.Down, challenges}
	case onChallenges:
		short = []key.Binding{startCh, k.Up, k.Down}
	}
	short = append(short, k.Back, k.Help)
	return common.Bindings{Short: short, Full: [][]key.Binding{
		{k.Up, k.Down, change, runAll, playRow},
		{nextPart, challenges, startCh, reset},
		{k.Present, k.Back, k.Help, k.Quit},
	}}
}

// View draws the switches and the scorecard side by side, the challenge
// above them, and below them the full text of what is under the cursor.
func (m *Model) View() string {
	st := m.c.Styles
	w := m.c.Width
	status := "not run yet"
	switch {
	case m.running:
		status = m.spin.View() + fmt.Sprintf(" running %d of %d scenarios…", len(sim.Scenarios())-len(m.results), len(sim.Scenarios()))
	case m.card != nil:
		status = m.card.Summary
	}
	parts := []string{common.Header(st, "Design lab", " · "+status, "", w)}
	if c := m.challenge; c != nil {
		mark, why := st.Accent.Render("Challenge: "), ""
		switch {
		case m.met:
			mark = st.Good.Render("✓ Challenge passed: ")
		case m.card != nil && !m.running && m.why != "":
			why = "\n" + st.Warn.Render(common.Hang("  not yet: ", m.why, w))
		}
		parts = append(parts, common.Hang(mark, c.Title+" · "+c.Prompt, w)+why)
	}
	leftW := max(34, min(44, w/2))
	detail := m.detail(w)
	// The columns take what the header, the challenge and the detail
	// leave, at least the switches' height; the scorecard scrolls in it.
	// When the window is too narrow for two columns, the part in focus
	// takes the whole width (tab goes to the other).
	fixed := len(strings.Split(strings.Join(parts, "\n"), "\n")) + 2
	var left, right string
	var room int
	if m.narrow() {
		left = m.switchesView(w)
		room = max(lipgloss.Height(left), m.c.Body()-fixed-lipgloss.Height(detail))
		switch m.focus {
		case onScorecard:
			left = m.scorecardView(w, room)
		case onChallenges:
			left = m.challengesView(w)
		}
	} else {
		left = m.switchesView(leftW)
		room = max(lipgloss.Height(left), m.c.Body()-fixed-lipgloss.Height(detail))
		right = " " + m.scorecardView(w-leftW-1, room)
		if m.focus == onChallenges {
			right = " " + m.challengesView(w-leftW-1)
		}
	}
	if dl := strings.Split(detail, "\n"); fixed+room+len(dl) > m.c.Body() { // a small window: the detail's start
		dl = dl[:max(0, m.c.Body()-fixed-room)]
		detail = strings.Join(dl, "\n")
	}
	parts = append(parts, "", lipgloss.JoinHorizontal(lipgloss.Top, left, right), "", detail)
	return strings.Join(parts, "\n")
}

// narrow reports whether the window is too narrow for the switches and the
// scorecard side by side (a ✗ row's consequence needs about 36 cells).
func (m *Model) narrow() bool { return m.c.Width-max(34, min(44, m.c.Width/2))-1 < 36 }

// switchesView lists the switches with their values.
func (m *Model) switchesView(w int) string {
	st := m.c.Styles
	lines := []string{st.BoxTitle.Render("Switches") + st.Faint.Render("  (the lesson's in grey)")}
	inert := notApplying(m.design)
	for i, sw := range m.switches {
		v := m.design.Get(sw.Name)
		value := v
		switch _, na := inert[sw.Name]; {
		case na:
			value = st.Faint.Render(v + " (n/a)")
		case v != sw.Values[0]:
			value = st.Warn.Render(v)
		default:
			value = st.Faint.Render(v)
		}
		line := fmt.Sprintf("%-11s %s", sw.Name, value)
		if i == m.cursor && m.focus == onSwitches {
			line = st.Cursor.Render("▸ ") + fmt.Sprintf("%-11s ", sw.Name) + "◂ " + value + " ▸"
		} else {
			line = "  " + line
		}
		lines = append(lines, ansi.Truncate(line, w, "…"))
	}
	stale := m.card != nil && m.ran != m.design && !m.running
	if stale {
		lines = append(lines, "", st.Warn.Render(common.Hang("", "the design changed: enter runs it", w)))
	}
	return lipgloss.NewStyle().Width(w).Render(strings.Join(lines, "\n"))
}

// scorecardView lists every scenario with its mark, and under each ✗ what
// the user suffers, in w x h cells: the header (the design, wrapped) stays,
// the rows scroll to keep the one under the cursor on screen, and a line
// says how many are above or below.
func (m *Model) scorecardView(w, h int) string {
	st := m.c.Styles
	head := append([]string{st.BoxTitle.Render("Scorecard")}, strings.Split(st.Faint.Render(common.Hang("  ", "("+m.ran.String()+")", w)), "\n")...)
	var rows [][]string
	for i, s := range sim.Scenarios() {
		mark := st.Faint.Render("·")
		if m.running {
			mark = m.spin.View()
		}
		r, ok := m.results[s.Name]
		if ok {
			switch {
			case r.Error != "":
				mark = st.Warn.Render("?")
			case r.Pass:
				mark = st.Good.Render("✓")
			default:
				mark = st.Bad.Render("✗")
			}
		}
		line := mark + " " + s.Name
		if i == m.row && m.focus == onScorecard {
			line = st.Cursor.Render("▸") + mark + " " + st.Selected.Render(s.Name)
		} else {
			line = " " + line
		}
		row := []string{ansi.Truncate(line, w, "…")}
		if ok && !r.Pass && r.Error == "" && r.Consequence != "" {
			row = append(row, strings.Split(st.Bad.Render(common.Hang("   ", r.Consequence, w)), "\n")...)
		}
		rows = append(rows, row)
	}
	return strings.Join(append(head, window(st, rows, m.row, max(1, h-len(head)))...), "\n")
}

// window is as many of rows (each one or more lines) as fit in h lines,
// keeping row at on screen, with a line for the rows above and one for
// those below when there are any.
func window(st *common.Styles, rows [][]string, at, h int) []string {
	height := func(from, to int) int {
		n := 0
		for _, r := range rows[from:to] {
			n += len(r)
		}
		return n
	}
	if height(0, len(rows)) <= h {
		var out []string
		for _, r := range rows {
			out = append(out, r...)
		}
		return out
	}
	at = max(0, min(at, len(rows)-1))
	// Grow from the cursor's row: down first, then up, leaving room for
	// the hint lines.
	first, end := at, at+1
	fits := func(f, e int) bool {
		hints := 0
		if f > 0 {
			hints++
		}
		if e < len(rows) {
			hints++
		}
		return height(f, e)+hints <= h
	}
	for {
		switch {
		case end < len(rows) && fits(first, end+1):
			end++
		case first > 0 && fits(first-1, end):
			first--
		default:
			var out []string
			if first > 0 {
				out = append(out, st.Accent.Render(fmt.Sprintf("▲ %d more", first)))
			}
			for _, r := range rows[first:end] {
				out = append(out, r...)
			}
			if end < len(rows) {
				out = append(out, st.Accent.Render(fmt.Sprintf("▼ %d more", len(rows)-end)))
			}
			return out[:min(len(out), h)]
		}
	}
}

// challengesView lists the challenges, passed ones ticked.
func (m *Model) challengesView(w int) string {
	st := m.c.Styles
	lines := []string{st.BoxTitle.Render("Challenges")}
	passed := m.c.Progress.Get().Challenges
	for i, c := range quiz.Challenges() {
		mark := st.Faint.Render("·")
		if _, ok := passed[c.ID]; ok {
			mark = st.Good.Render("✓")
		}
		cur := "  "
		if i == m.chRow {
			cur = st.Cursor.Render("▸ ")
		}
		lines = append(lines, common.Hang(cur+mark+" ", c.Title, w))
	}
	return strings.Join(lines, "\n")
}

// detail is the whole text of what is under the cursor: the switch and its
// value, the scenario's verdict, or the challenge.
func (m *Model) detail(w int) string {
	st := m.c.Styles
	switch m.focus {
	case onScorecard:
		s := sim.Scenarios()[m.row]
		r, ok := m.results[s.Name]
		if !ok {
			return st.Subtle.Render(common.Hang("", s.Title+": not run yet", w))
		}
		mark, style := "✓ ", st.Good
		if !r.Pass {
			mark, style = "✗ ", st.Bad
		}
		out := st.Caption.Render(common.Hang("", s.Title, w)) + "\n" + style.Render(common.Hang(mark, r.Consequence, w))
		for _, inv := range r.Failed {
			out += "\n" + st.Bad.Render(common.Hang("  broken: ", inv, w))
		}
		return out
	case onChallenges:
		c := quiz.Challenges()[m.chRow]
		return st.Caption.Render(common.Hang("", c.Title, w)) + "\n" + common.Hang("", c.Prompt, w)
	}
	sw := m.switches[m.cursor]
	v := m.design.Get(sw.Name)
	out := st.Caption.Render(common.Hang("", sw.Name+": "+sw.Explain, w)) + "\n" +
		st.Subtle.Render(common.Hang("  "+v+": ", sim.Means(sw.Name, v), w))
	if why, ok := notApplying(m.design)[sw.Name]; ok {
		out += "\n" + st.Warn.Render(common.Hang("  does not apply: ", why, w))
	}
	return out
}

// notApplying maps each switch of d that acts on nothing to why.
func notApplying(d sim.Switches) map[string]string {
	out := map[string]string{}
	for _, na := range d.NotApplying() {
		out[na.Switch] = na.Why
	}
	return out
}
