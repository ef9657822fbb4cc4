// Package picker lists every scenario (a bubbles list, one line each, the
// chosen variant marked in brackets) above a pane with the whole
// explanation of the one under the cursor; v picks its correct or broken
// variant, Enter plays it.
package picker

import (
	"fmt"
	"io"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/list"
	"charm.land/bubbles/v2/paginator"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
)

// intro says what the page is; it wraps, never cut.
const intro = "each runs live on PostgreSQL, correct or broken"

// maxDetailWidth keeps the explanation's lines readable on wide windows.
const maxDetailWidth = 100

// item is one scenario in the list.
type item struct{ s *sim.Scenario }

// FilterValue is the scenario's title (the list is not filtered).
func (i item) FilterValue() string { return i.s.Title }

// Model lists every scenario, one a line with its chosen variant, above
// the whole explanation of the one under the cursor in that variant.
type Model struct {
	c        *common.Common
	list     list.Model
	variants map[string]sim.Variant
	// titleWidth is the width of the longest title.
	titleWidth int
}

// New lists every scenario, each in its correct variant to begin with.
func New(c *common.Common) *Model {
	m := &Model{c: c, variants: map[string]sim.Variant{}}
	scenarios := sim.Scenarios()
	items := make([]list.Item, len(scenarios))
	for i, s := range scenarios {
		items[i] = item{s}
		m.titleWidth = max(m.titleWidth, ansi.StringWidth(s.Title))
	}
	l := list.New(items, delegate{m}, 0, 0)
	l.SetShowTitle(false)
	l.SetShowStatusBar(false)
	l.SetShowHelp(false)
	l.SetFilteringEnabled(false)
	l.DisableQuitKeybindings()
	// Page numbers, not dots: without colour the dots all look alike.
	l.Paginator.Type = paginator.Arabic
	l.Paginator.ArabicFormat = "page %d of %d (←/→)"
	l.Styles.ArabicPagination = c.Styles.Subtle
	l.Styles.PaginationStyle = lipgloss.NewStyle().PaddingLeft(2)
	m.list = l
	m.setSize()
	return m
}

// Init does nothing: the list is all there.
func (m *Model) Init() tea.Cmd { return nil }

// Title names the page.
func (m *Model) Title() string { return "Scenarios" }

// Stand is the list of scenarios, on screen: no place of its own to come
// back to, so the spot saved before stays.
func (m *Model) Stand() common.Stand {
	return common.Stand{At: progress.Place{Page: progress.PagePicker}, Reopens: true, Keep: true}
}

func (m *Model) variant(s *sim.Scenario) sim.Variant {
	if v, ok := m.variants[s.Name]; ok {
		return v
	}
	return sim.Correct
}

// selected is the scenario under the cursor.
func (m *Model) selected() *sim.Scenario {
	if it, ok := m.list.SelectedItem().(item); ok {
		return it.s
	}
	return nil
}

// Update picks a variant, opens, goes back, and gives the rest to the list
// (moving, paging).
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if _, ok := msg.(tea.WindowSizeMsg); ok {
		m.setSize()
		return nil
	}
	if kp, ok := msg.(tea.KeyPressMsg); ok {
		k := m.c.Keys
		s := m.selected()
		switch {
		case key.Matches(kp, k.Variant) && s != nil:
			if s.HasBroken() {
				m.variants[s.Name] = m.variant(s).Other()
			}
			return nil
		case key.Matches(kp, k.Open) && s != nil:
			return common.OpenCmd(common.Open{Place: progress.Place{Page: progress.PagePlay, Name: s.Name, Variant: string(m.variant(s))}})
		case key.Matches(kp, k.Back):
			return common.BackCmd
		}
	}
	var cmd tea.Cmd
	m.list, cmd = m.list.Update(msg)
	return cmd
}

// KeyMap is the picker's keys, most important first.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	if s := m.selected(); s != nil {
		k.Variant.SetEnabled(s.HasBroken()) // a copy: the shared map stays whole
	}
	play := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "play"))
	pages := key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←/→", "page"))
	pages.SetEnabled(m.list.Paginator.TotalPages > 1)
	return common.Bindings{
		Short: []key.Binding{play, k.Variant, k.Up, k.Down, pages, k.Back},
		Full:  [][]key.Binding{{k.Up, k.Down, pages}, {k.Variant, play}, {k.Back, k.Help, k.Quit}},
	}
}

// setSize gives the list what the header and the tallest explanation
// leave, so the list does not move as the cursor does.
func (m *Model) setSize() {
	w := m.c.Width
	room := m.c.Body() - lipgloss.Height(strings.TrimSuffix(m.header(), "\n")) - m.detailHeight()
	m.list.SetSize(w, max(1, room))
}

// header names the page and says what it does, on one line (it fits the
// smallest window whole).
func (m *Model) header() string {
	return common.Header(m.c.Styles, "Scenarios", " · "+intro, "", m.c.Width) + "\n"
}

// detailWidth is the wrap width of the explanation.
func (m *Model) detailWidth() int { return max(20, min(m.c.Width-2, maxDetailWidth)) }

// detail is the whole title and explanation of s in variant v.
func (m *Model) detail(s *sim.Scenario, v sim.Variant) string {
	st := m.c.Styles
	w := m.detailWidth()
	wrap := lipgloss.NewStyle().Width(w)
	design := "correct design"
	switch {
	case v == sim.Broken:
		design = "broken design"
	case !s.HasBroken():
		design = "correct design (it has no broken variant)"
	}
	head := st.BoxTitle.Render(wrap.Render(fmt.Sprintf("%s · %s", s.Title, design)))
	// Broken at spaces only: "in-flight=wait" and "Retry-After" stay whole.
	return head + "\n" + common.HangWords("", s.Explain(v), w)
}

// detailHeight is the height of the tallest detail at this width, with the
// blank line above it.
func (m *Model) detailHeight() int {
	h := 0
	for _, s := range sim.Scenarios() {
		for _, v := range []sim.Variant{sim.Correct, sim.Broken} {
			if v == sim.Broken && !s.HasBroken() {
				continue
			}
			h = max(h, lipgloss.Height(m.detail(s, v)))
		}
	}
	return h + 1
}

// View draws the header, the list and the selected scenario's whole
// explanation.
func (m *Model) View() string {
	var b strings.Builder
	b.WriteString(m.header())
	lv := m.list.View()
	if m.list.Paginator.TotalPages == 1 {
		lv = strings.TrimRight(lv, "\n ") // the explanation right under the list
	}
	b.WriteString(lv + "\n\n")
	if s := m.selected(); s != nil {
		b.WriteString(m.detail(s, m.variant(s)))
	}
	return b.String()
}

// delegate draws a scenario on one line: the cursor, its title and its
// variants, the chosen one in brackets (readable without colour).
type delegate struct{ m *Model }

func (d delegate) Height() int                             { return 1 }
func (d delegate) Spacing() int                            { return 0 }
func (d delegate) Update(_ tea.Msg, _ *list.Model) tea.Cmd { return nil }

// Render draws item it; a title cut short here is whole in the detail
// pane when the cursor is on it.
func (d delegate) Render(w io.Writer, l list.Model, index int, it list.Item) {
	i, ok := it.(item)
	if !ok {
		return
	}
	st := d.m.c.Styles
	s := i.s
	// Brackets mark the chosen variant, colour or not (NO_COLOR): both
	// variants named where the window has room, else the chosen one only,
	// so that no title is cut. A scenario without a broken design offers
	// none: "[correct] only", or "[correct]" where room is short.
	full := d.m.titleWidth+2+2+len("[correct] broken") <= d.m.c.Width
	correct, broken := st.Good.Render("[correct]"), st.Bad.Render("[broken] ")
	tagWidth := len("[correct]")
	if full {
		other := " broken"
		if !s.HasBroken() {
			other = " only"
		}
		correct, broken = correct+st.Faint.Render(other), st.Faint.Render("correct ")+st.Bad.Render("[broken]")
		tagWidth = len("[correct] broken")
	}
	tag := correct
	if d.m.variant(s) == sim.Broken {
		tag = broken
	}
	// The tags line up after the longest title, if the window allows.
	col := min(d.m.titleWidth+2, d.m.c.Width-2-tagWidth)
	title := common.Truncate(s.Title, col-2)
	pad := strings.Repeat(" ", max(2, col-ansi.StringWidth(title)))
	line := st.Item.Render(title) + pad + tag
	if index == l.Index() {
		line = st.Cursor.Render("▸ ") + st.Selected.Render(title) + pad + tag
	}
	_, _ = io.WriteString(w, line)
}
