// Package picker lists every scenario with its explanation; v picks the
// correct or the broken variant of the one under the cursor, Enter plays it.
package picker

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/sim"
)

// Model lists every scenario with its one-line explanation; v picks
// the correct or the broken variant, Enter plays it.
type Model struct {
	c        *common.Common
	items    []*sim.Scenario
	cursor   int
	top      int // first visible item
	variants map[string]sim.Variant
}

// New lists every scenario, each in its correct variant to begin with.
func New(c *common.Common) *Model {
	return &Model{c: c, items: sim.Scenarios(), variants: map[string]sim.Variant{}}
}

// Init does nothing: the list is all there.
func (m *Model) Init() tea.Cmd { return nil }

// Title names the page.
func (m *Model) Title() string { return "Scenarios" }

func (m *Model) variant(s *sim.Scenario) sim.Variant {
	if v, ok := m.variants[s.Name]; ok {
		return v
	}
	return sim.Correct
}

// Update moves, picks a variant and opens.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k := m.c.Keys
	switch {
	case key.Matches(kp, k.Up):
		m.cursor = (m.cursor + len(m.items) - 1) % len(m.items)
	case key.Matches(kp, k.Down):
		m.cursor = (m.cursor + 1) % len(m.items)
	case key.Matches(kp, k.Variant):
		s := m.items[m.cursor]
		if s.HasBroken() {
			m.variants[s.Name] = m.variant(s).Other()
		}
	case key.Matches(kp, k.Open):
		s := m.items[m.cursor]
		v := m.variant(s)
		return common.OpenCmd(common.Open{Page: common.PagePlay, Name: s.Name, Variant: v})
	case key.Matches(kp, k.Back):
		return common.BackCmd
	}
	return nil
}

// KeyMap is the picker's keys.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	return common.Bindings{
		Short: []key.Binding{k.Up, k.Down, k.Variant, k.Open, k.Back, k.Help},
		Full:  [][]key.Binding{{k.Up, k.Down}, {k.Variant, k.Open}, {k.Back, k.Help, k.Quit}},
	}
}

// View lists the scenarios that fit the window.
func (m *Model) View() string {
	st := m.c.Styles
	w := m.c.Width
	var b strings.Builder
	b.WriteString(st.Title.Render("Scenarios") + st.Subtle.Render(common.Truncate(" · each runs live on PostgreSQL; v picks correct or broken", w-9)) + "\n\n")
	room := max(1, (m.c.Height-4)/3) // three lines an item
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
		tag := st.Good.Render("[correct]") + st.Faint.Render(" broken")
		switch {
		case !s.HasBroken():
			tag = st.Good.Render("[correct]") + st.Faint.Render(" (no broken variant)")
		case v == sim.Broken:
			tag = st.Faint.Render("correct ") + st.Bad.Render("[broken]")
		}
		title := common.Truncate(s.Title, w-30)
		desc := common.Truncate(s.Explain(v), w-4)
		if i == m.cursor {
			b.WriteString(st.Cursor.Render("▸ ") + st.Selected.Render(title) + "  " + tag + "\n")
			b.WriteString("  " + st.Subtle.Render(desc) + "\n\n")
		} else {
			b.WriteString(st.Item.Render(title) + "  " + tag + "\n")
			b.WriteString("  " + st.Faint.Render(desc) + "\n\n")
		}
	}
	return b.String()
}
