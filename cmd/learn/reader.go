package main

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/lessons"
)

// maxReadWidth keeps lines readable on very wide windows.
const maxReadWidth = 100

// readerModel shows one page rendered with Glamour in a scrollable viewport.
type readerModel struct {
	c        *common
	page     *lessons.Page
	vp       viewport.Model
	rendered bool
	err      error
	sections []int // rendered line of each section heading
	// pinned is the section tab last jumped to, shown even when the page
	// cannot scroll its heading to the top (the last sections); -1 when
	// the reader scrolled by other means.
	pinned int
}

// renderedMsg carries a page rendered at a width.
type renderedMsg struct {
	key docKey
	out string
	err error
}

func newReader(c *common, p *lessons.Page) *readerModel {
	vp := viewport.New()
	vp.SoftWrap = false
	m := &readerModel{c: c, page: p, vp: vp, pinned: -1}
	m.SetSize(c.width, c.height)
	return m
}

func (m *readerModel) wrapWidth() int { return max(20, min(m.c.width-2, maxReadWidth)) }

func (m *readerModel) key() docKey { return docKey{slug: m.page.Slug, width: m.wrapWidth()} }

// SetSize fits the viewport to the window: a title line above, a help line
// below.
func (m *readerModel) SetSize(w, h int) {
	m.vp.SetWidth(w)
	m.vp.SetHeight(max(1, h-2))
	if out, ok := m.c.docs[m.key()]; ok {
		m.setContent(out)
	} else {
		m.rendered = false
	}
}

func (m *readerModel) setContent(out string) {
	offset := m.vp.YOffset()
	m.vp.SetContent(out)
	m.vp.SetYOffset(offset)
	m.rendered = true
	m.sections = findSections(out, m.page.Sections)
}

// render renders the page for the current width in the background, unless
// it is cached.
func (m *readerModel) render() tea.Cmd {
	k := m.key()
	if _, ok := m.c.docs[k]; ok {
		return nil
	}
	p, style := m.page, m.c.docStyle
	return func() tea.Msg {
		out, err := renderPage(p, k.width, style)
		return renderedMsg{key: k, out: out, err: err}
	}
}

func (m *readerModel) Init() tea.Cmd { return m.render() }

func (m *readerModel) Update(msg tea.Msg) (*readerModel, tea.Cmd) {
	switch msg := msg.(type) {
	case renderedMsg:
		if msg.err != nil {
			m.err = msg.err
			return m, nil
		}
		m.c.docs[msg.key] = msg.out
		if msg.key == m.key() {
			m.setContent(msg.out)
		}
		return m, nil
	case tea.WindowSizeMsg:
		return m, m.render()
	case tea.KeyPressMsg:
		k := m.c.keys
		switch {
		case key.Matches(msg, k.Back):
			return m, back
		case key.Matches(msg, k.Top):
			m.vp.GotoTop()
			m.pinned = -1
			return m, nil
		case key.Matches(msg, k.Bottom):
			m.vp.GotoBottom()
			m.pinned = -1
			return m, nil
		case key.Matches(msg, k.NextSection):
			m.jumpSection(+1)
			return m, nil
		case key.Matches(msg, k.PrevSection):
			m.jumpSection(-1)
			return m, nil
		}
	}
	before := m.vp.YOffset()
	var cmd tea.Cmd
	m.vp, cmd = m.vp.Update(msg)
	if m.vp.YOffset() != before {
		m.pinned = -1
	}
	return m, cmd
}

// jumpSection goes to the next (dir +1) or previous (-1) section heading.
func (m *readerModel) jumpSection(dir int) {
	cur := m.current()
	next := min(max(cur+dir, 0), len(m.sections)-1)
	if next < 0 {
		return
	}
	m.pinned = next
	m.vp.SetYOffset(m.sections[next])
}

// current is the index of the section being read: the one tab last jumped
// to, else the last heading at or above the top of the viewport.
func (m *readerModel) current() int {
	if m.pinned >= 0 {
		return m.pinned
	}
	y, cur := m.vp.YOffset(), -1
	for i, l := range m.sections {
		if l <= y+1 {
			cur = i
		}
	}
	return cur
}

// findSections finds the rendered line of each section heading, in order.
func findSections(rendered string, sections []lessons.Section) []int {
	lines := strings.Split(ansi.Strip(rendered), "\n")
	var at []int
	from := 0
	for _, s := range sections {
		for i := from; i < len(lines); i++ {
			t := strings.TrimSpace(lines[i])
			if strings.TrimLeft(t, "# ") == s.Title {
				at = append(at, i)
				from = i + 1
				break
			}
		}
	}
	return at
}

// section returns the title of the section being read.
func (m *readerModel) section() string {
	if i := m.current(); i >= 0 && i < len(m.page.Sections) {
		return m.page.Sections[i].Title
	}
	return ""
}

func (m *readerModel) bindings() bindings {
	k := m.c.keys
	return bindings{
		short: []key.Binding{k.Up, k.Down, k.NextSection, k.Back, k.Help, k.Quit},
		full: [][]key.Binding{
			{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
			{k.NextSection, k.PrevSection},
			{k.Back, k.Help, k.Quit},
		},
	}
}

func (m *readerModel) View() string {
	st := m.c.st
	head := st.title.Render(fit(m.page.Title, m.c.width-12))
	if s := m.section(); s != "" {
		head += st.subtle.Render(fit(" · "+s, m.c.width-ansi.StringWidth(head)-7))
	}
	pct := fmt.Sprintf("%3.0f%%", m.vp.ScrollPercent()*100)
	gap := max(1, m.c.width-ansi.StringWidth(head)-len(pct))
	head += strings.Repeat(" ", gap) + st.subtle.Render(pct)
	var body string
	switch {
	case m.err != nil:
		body = st.bad.Render(m.err.Error())
	case !m.rendered:
		body = st.subtle.Render("rendering…")
	default:
		body = m.vp.View()
	}
	return head + "\n" + body
}
