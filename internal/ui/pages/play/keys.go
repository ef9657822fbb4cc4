package play

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
)

// The play screen's keys: what each does, and the map its footer and help
// show.

// key handles a press on the play screen.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.Back):
		return common.BackCmd
	case key.Matches(msg, k.Play):
		if m.phase == phaseFailed {
			return nil
		}
		if m.phase == phaseFinished && m.view == m.last() {
			m.playing = true
			return m.start()
		}
		m.playing = !m.playing
		return m.schedule()
	case key.Matches(msg, k.Step):
		return m.forward()
	case key.Matches(msg, k.StepBack):
		if m.view > 0 {
			m.view, m.scroll = m.view-1, 0
		}
		m.playing = false
		return nil
	case key.Matches(msg, k.Up):
		m.scrollUp(1)
	case key.Matches(msg, k.Down):
		m.scrollDown(1)
	case key.Matches(msg, k.Top):
		m.scrollUp(1 << 20) // the view clamps it to the first line
	case key.Matches(msg, k.Bottom):
		m.scrollDown(1 << 20)
	case key.Matches(msg, k.Restart):
		return m.start()
	case key.Matches(msg, k.Variant):
		if !m.switches() {
			return nil
		}
		m.variant = m.variant.Other()
		return m.start()
	case key.Matches(msg, k.Faster):
		m.speed = min(m.speed+1, len(speeds)-1)
		return m.schedule()
	case key.Matches(msg, k.Slower):
		m.speed = max(m.speed-1, 0)
		return m.schedule()
	}
	return nil
}

var (
	scrollUp   = key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up"))
	scrollDown = key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down"))
)

// KeyMap is the play screen's keys.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	k.Variant.SetEnabled(m.switches()) // a copy: the shared map stays whole
	// The footer names step and back by their letters, so that both the
	// screen's keys fit at 60 columns; the overlay has every key.
	step := key.NewBinding(key.WithKeys(k.Step.Keys()...), key.WithHelp("n", "step"))
	back := key.NewBinding(key.WithKeys(k.StepBack.Keys()...), key.WithHelp("p", "back a step"))
	return common.Bindings{
		// Most important first: the footer drops from the end.
		Short: []key.Binding{k.Play, step, back, k.Variant, k.Restart, k.Faster, k.Slower, k.Back, k.Help},
		Full: [][]key.Binding{
			{k.Play, k.Step, k.StepBack, k.Restart, k.Variant},
			{k.Faster, k.Slower, k.Present},
			{scrollUp, scrollDown, k.Top, k.Bottom},
			{k.Back, k.Help, k.Quit},
		},
	}
}
