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

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

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
