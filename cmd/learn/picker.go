package main

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/sim"
)

// pickerModel lists every scenario with its one-line explanation; v picks
// the correct or the broken variant, Enter plays it.
type pickerModel struct {
	c        *common
	items    []*sim.Scenario
	cursor   int
	top      int // first visible item
	variants map[string]sim.Variant
}

// playVariantMsg asks the root for the play screen on a scenario variant.
type playVariantMsg struct {
	name    string
	variant sim.Variant
}

func newPicker(c *common) *pickerModel {
	return &pickerModel{c: c, items: sim.Scenarios(), variants: map[string]sim.Variant{}}
}

func (m *pickerModel) variant(s *sim.Scenario) sim.Variant {
	if v, ok := m.variants[s.Name]; ok {
		return v
	}
	return sim.Correct
}

func (m *pickerModel) Update(msg tea.Msg) (*pickerModel, tea.Cmd) {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	k := m.c.keys
	switch {
	case key.Matches(kp, k.Up):
		m.cursor = (m.cursor + len(m.items) - 1) % len(m.items)
	case key.Matches(kp, k.Down):
		m.cursor = (m.cursor + 1) % len(m.items)
	case key.Matches(kp, k.Variant):
		s := m.items[m.cursor]
		if s.HasBroken() {
			m.variants[s.Name] = other(m.variant(s))
		}
	case key.Matches(kp, k.Open):
		s := m.items[m.cursor]
		v := m.variant(s)
		return m, func() tea.Msg { return playVariantMsg{name: s.Name, variant: v} }
	case key.Matches(kp, k.Back):
		return m, back
	}
	return m, nil
}

// other is the variant v is not.
func other(v sim.Variant) sim.Variant {
	if v == sim.Broken {
		return sim.Correct
	}
	return sim.Broken
}

func (m *pickerModel) bindings() bindings {
	k := m.c.keys
	return bindings{
		short: []key.Binding{k.Up, k.Down, k.Variant, k.Open, k.Back, k.Help},
		full:  [][]key.Binding{{k.Up, k.Down}, {k.Variant, k.Open}, {k.Back, k.Help, k.Quit}},
	}
}

func (m *pickerModel) View() string {
	st := m.c.st
	w := m.c.width
	var b strings.Builder
	b.WriteString(st.title.Render("Scenarios") + st.subtle.Render(fit(" · each runs live on PostgreSQL; v picks correct or broken", w-9)) + "\n\n")
	room := max(1, (m.c.height-4)/3) // three lines an item
	if m.cursor < m.top {
		m.top = m.cursor
	}
	if m.cursor >= m.top+room {
		m.top = m.cursor - room + 1
	}
	for i := m.top; i < len(m.items) && i < m.top+room; i++ {
		s := m.items[i]
		v := m.variant(s)
		// Brackets mark the chosen variant, colour or not (NO_COLOR).
		tag := st.good.Render("[correct]") + st.faint.Render(" broken")
		switch {
		case !s.HasBroken():
			tag = st.good.Render("[correct]") + st.faint.Render(" (no broken variant)")
		case v == sim.Broken:
			tag = st.faint.Render("correct ") + st.bad.Render("[broken]")
		}
		title := fit(s.Title, w-30)
		desc := fit(s.Explain(v), w-4)
		if i == m.cursor {
			b.WriteString(st.cursor.Render("▸ ") + st.selected.Render(title) + "  " + tag + "\n")
			b.WriteString("  " + st.subtle.Render(desc) + "\n\n")
		} else {
			b.WriteString(st.item.Render(title) + "  " + tag + "\n")
			b.WriteString("  " + st.faint.Render(desc) + "\n\n")
		}
	}
	return b.String()
}
