package main

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/quiz"
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

	plain   []string // the rendered lines without escapes, for search
	toc     bool     // the table of contents is open
	tocAt   int      // its cursor
	typing  bool     // the search box has the keys
	input   textinput.Model
	query   string
	matches []int  // rendered lines that contain the query
	match   int    // the current one
	goTo    string // a section to open at once the page is rendered (resume)
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
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "search this page"
	m := &readerModel{c: c, page: p, vp: vp, pinned: -1, input: in}
	m.vp.LeftGutterFunc = m.gutter
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
	m.plain = strings.Split(ansi.Strip(out), "\n")
	m.search(m.query) // the lines moved with the width
	if m.goTo != "" {
		for i, sec := range m.page.Sections {
			if sec.Title == m.goTo && i < len(m.sections) {
				m.pinned = i
				m.vp.SetYOffset(m.sections[i])
			}
		}
		m.goTo = ""
	}
}

// gutter marks the lines that match the search: ▶ the current match, │ the
// others.
func (m *readerModel) gutter(g viewport.GutterContext) string {
	if len(m.matches) == 0 {
		return ""
	}
	switch i := slices.Index(m.matches, g.Index); {
	case i < 0 || g.Soft:
		return "  "
	case i == m.match:
		return m.c.st.current.Render("▶ ")
	default:
		return m.c.st.accent.Render("│ ")
	}
}

// search finds the lines holding q (any case) and goes to the first one at
// or below the top of the page.
func (m *readerModel) search(q string) {
	m.query, m.matches, m.match = q, nil, 0
	if q == "" {
		return
	}
	lq := strings.ToLower(q)
	for i, l := range m.plain {
		if strings.Contains(strings.ToLower(l), lq) {
			m.matches = append(m.matches, i)
		}
	}
	for i, l := range m.matches {
		if l >= m.vp.YOffset() {
			m.match = i
			break
		}
	}
	m.showMatch()
}

// showMatch scrolls the current match into view, a few lines from the top.
func (m *readerModel) showMatch() {
	if len(m.matches) == 0 {
		return
	}
	m.pinned = -1
	m.vp.SetYOffset(max(0, m.matches[m.match]-3))
}

// capturing reports whether the reader takes every key (the search box).
func (m *readerModel) capturing() bool { return m.typing }

// render renders the page for the current width in the background, unless
// it is cached.
func (m *readerModel) render() tea.Cmd {
	k := m.key()
	if _, ok := m.c.docs[k]; ok {
		return nil
	}
	p, style := m.page, m.c.docStyle
	return func() tea.Msg {
		out, err := renderBody(p, k.width, style)
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
		if m.typing {
			return m.typeKey(msg)
		}
		if m.toc {
			return m.tocKey(msg)
		}
		k := m.c.keys
		switch {
		case key.Matches(msg, k.Back):
			if m.query != "" {
				m.search("")
				return m, nil
			}
			return m, back
		case key.Matches(msg, k.Search):
			m.typing = true
			m.input.SetValue(m.query)
			return m, m.input.Focus()
		case key.Matches(msg, k.NextMatch) && len(m.matches) > 0:
			m.match = (m.match + 1) % len(m.matches)
			m.showMatch()
			return m, nil
		case key.Matches(msg, k.PrevMatch) && len(m.matches) > 0:
			m.match = (m.match + len(m.matches) - 1) % len(m.matches)
			m.showMatch()
			return m, nil
		case key.Matches(msg, k.Contents):
			m.toc, m.tocAt = true, max(0, m.current())
			return m, nil
		case key.Matches(msg, k.MarkRead):
			slug, read := m.page.Slug, m.c.prog.IsRead(m.page.Slug)
			return m, m.c.save(func(p *quiz.Progress) {
				if read {
					delete(p.Read, slug)
				} else {
					p.MarkRead(slug, now())
				}
			})
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

// typeKey edits the search; enter searches, esc gives up.
func (m *readerModel) typeKey(msg tea.KeyPressMsg) (*readerModel, tea.Cmd) {
	switch msg.String() {
	case "enter":
		m.typing = false
		m.input.Blur()
		m.search(strings.TrimSpace(m.input.Value()))
		return m, nil
	case "esc":
		m.typing = false
		m.input.Blur()
		return m, nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// tocKey moves in the table of contents; enter jumps, esc closes.
func (m *readerModel) tocKey(msg tea.KeyPressMsg) (*readerModel, tea.Cmd) {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Up):
		m.tocAt = max(0, m.tocAt-1)
	case key.Matches(msg, k.Down):
		m.tocAt = min(len(m.sections)-1, m.tocAt+1)
	case key.Matches(msg, k.Open):
		m.toc = false
		if m.tocAt < len(m.sections) {
			m.pinned = m.tocAt
			m.vp.SetYOffset(m.sections[m.tocAt])
		}
	case key.Matches(msg, k.Back, k.Contents):
		m.toc = false
	}
	return m, nil
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
		short: []key.Binding{k.Up, k.Down, k.NextSection, k.Contents, k.Search, k.MarkRead, k.Back, k.Help, k.Quit},
		full: [][]key.Binding{
			{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
			{k.NextSection, k.PrevSection, k.Contents, k.MarkRead},
			{k.Search, k.NextMatch, k.PrevMatch},
			{k.Back, k.Help, k.Quit},
		},
	}
}

func (m *readerModel) View() string {
	st := m.c.st
	pct := fmt.Sprintf("%3.0f%%", m.vp.ScrollPercent()*100)
	if m.c.prog.IsRead(m.page.Slug) {
		pct = "✓ read · " + pct
	}
	room := m.c.width - ansi.StringWidth(pct) - 1
	head := st.title.Render(fit(m.page.Title, room-6))
	if s := m.section(); s != "" {
		head += st.subtle.Render(fit(" · "+s, room-ansi.StringWidth(head)))
	}
	gap := max(1, m.c.width-ansi.StringWidth(head)-ansi.StringWidth(pct))
	head += strings.Repeat(" ", gap) + st.subtle.Render(pct)
	var body string
	switch {
	case m.err != nil:
		body = st.bad.Render(m.err.Error())
	case !m.rendered:
		body = st.subtle.Render("rendering…")
	case m.toc:
		body = m.contents()
	default:
		body = m.vp.View()
	}
	if foot := m.searchLine(); foot != "" {
		// The search line takes the viewport's last line.
		lines := strings.Split(body, "\n")
		if n := m.vp.Height(); len(lines) >= n && n > 1 {
			lines = lines[:n-1]
		}
		body = strings.Join(lines, "\n") + "\n" + foot
	}
	return head + "\n" + body
}

// searchLine is the search box while typing, or where the matches stand.
func (m *readerModel) searchLine() string {
	st := m.c.st
	switch {
	case m.typing:
		return m.input.View()
	case m.query != "" && len(m.matches) == 0:
		return st.warn.Render(fit(fmt.Sprintf("/%s: not on this page (esc clears)", m.query), m.c.width))
	case m.query != "":
		return st.subtle.Render(fit(fmt.Sprintf("/%s: match %d of %d (n next, N previous, esc clears)", m.query, m.match+1, len(m.matches)), m.c.width))
	}
	return ""
}

// contents is the table of contents.
func (m *readerModel) contents() string {
	st := m.c.st
	var b strings.Builder
	b.WriteString(st.title.Render("Contents") + st.subtle.Render("  (enter goes there, esc closes)") + "\n\n")
	for i, s := range m.page.Sections {
		if i >= len(m.sections) {
			break
		}
		if i == m.tocAt {
			b.WriteString(st.cursor.Render("▸ ") + st.selected.Render(s.Title) + "\n")
		} else {
			b.WriteString(st.item.Render(s.Title) + "\n")
		}
	}
	return b.String()
}
