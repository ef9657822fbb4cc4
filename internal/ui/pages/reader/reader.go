// Package reader shows one lesson page, rendered with Glamour, in a
// scrollable viewport: sections by tab, a table of contents, search (a
// phrase is found even where the page wrapped it, and each match is
// highlighted), and marking the page read. A new window size re-renders the
// page and keeps the reader in the same place of the same section.
package reader

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/progress"
)

// maxReadWidth keeps lines readable on very wide windows.
const maxReadWidth = 100

// Model shows one page rendered with Glamour in a scrollable viewport.
type Model struct {
	common.PresenterMode // no footer; the section counter and the clock in the header
	c                    *common.Common
	page                 *lessons.Page
	vp                   viewport.Model
	rendered             bool
	pending              common.DocKey // the rendering under way, if any
	err                  error
	sections             []int // rendered line of each section heading
	// pinned is the section tab last jumped to, shown even when the page
	// cannot scroll its heading to the top (the last sections); -1 when
	// the reader scrolled by other means.
	pinned int

	out    string   // the page as the viewport holds it
	lines  []string // its lines
	index  *text    // their text, for search: made at the first search (nil until then)
	toc    bool     // the table of contents is open
	tocAt  int      // its cursor
	typing bool     // the search box has the keys
	input  textinput.Model
	query  string
	hits   []hit  // the matches of the query
	match  int    // the current one
	goTo   string // a section to open at once the page is rendered (resume)
	// anchor is where the reader was when the width changed, until the
	// page is rendered at the new width.
	anchor *anchor
}

// anchor is a place in the page that survives re-wrapping: a section (-1:
// before the first) and how far into it, as a fraction of its lines; or
// the page's end, when the view was at its bottom.
type anchor struct {
	section int
	within  float64
	pinned  bool
	bottom  bool
}

// renderedMsg carries a page rendered at a width.
type renderedMsg struct {
	key common.DocKey
	out string
	err error
}

// New shows page p; section, when not empty, is the section to open at
// once the page is rendered (resuming).
func New(c *common.Common, p *lessons.Page, section string) *Model {
	vp := viewport.New()
	vp.SoftWrap = false
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "search this page"
	ist := textinput.DefaultStyles(c.Styles.Dark)
	ist.Focused.Placeholder, ist.Blurred.Placeholder = c.Styles.Placeholder, c.Styles.Placeholder
	in.SetStyles(ist)
	m := &Model{c: c, page: p, vp: vp, pinned: -1, input: in, goTo: section}
	m.setSize()
	return m
}

func (m *Model) wrapWidth() int { return WrapWidth(m.c.Width) }

// WrapWidth is the width, in cells, the reader renders a page at in a
// window w cells wide.
func WrapWidth(w int) int { return max(20, min(w-2, maxReadWidth)) }

func (m *Model) key() common.DocKey {
	return common.DocKey{Slug: m.page.Slug, Width: m.wrapWidth(), Style: m.c.DocStyle}
}

// setSize fits the viewport to the window: a title line above, a help line
// below. A new width needs the page wrapped again: where the reader is is
// kept as an anchor until it is.
func (m *Model) setSize() {
	// The box is as wide as the window, so its placeholder shows whole
	// (with no width it showed its first letter only: "/s").
	m.input.SetWidth(max(1, m.c.Width-ansi.StringWidth(m.input.Prompt)-1))
	atBottom := m.rendered && m.vp.AtBottom()
	if m.rendered && m.anchor == nil && m.c.Width != m.vp.Width() {
		m.anchor = m.place()
	}
	m.vp.SetWidth(m.c.Width)
	m.fitHeight()
	if out, ok := m.c.Docs.Get(m.key()); ok {
		m.setContent(out)
	} else {
		m.rendered = false
	}
	if atBottom && m.rendered && m.anchor == nil {
		m.vp.GotoBottom() // a new height: the end stays on screen
	}
}

// place is where the reader is: the section being read and how far into
// it the top of the view is.
func (m *Model) place() *anchor {
	cur := m.current()
	y := m.vp.YOffset()
	if m.pinned < 0 && cur >= 0 && y < m.sections[cur] {
		// current counts a heading one line below the top as the section
		// read; the anchor is what is at the top, the part before it (the
		// page's first line, above the first heading, included), so that a
		// page at its top stays at its top when wrapped again.
		cur--
	}
	start, end := 0, len(m.lines)
	if cur >= 0 {
		start = m.sections[cur]
	}
	if cur+1 < len(m.sections) {
		end = m.sections[cur+1]
	}
	within := 0.0
	if end > start {
		within = min(1, max(0, float64(y-start)/float64(end-start)))
	}
	return &anchor{section: cur, within: within, pinned: m.pinned >= 0, bottom: m.vp.AtBottom()}
}

// goToAnchor puts the view at a, in the page as now wrapped.
func (m *Model) goToAnchor(a *anchor) {
	start, end := 0, len(m.lines)
	if a.section >= 0 && a.section < len(m.sections) {
		start = m.sections[a.section]
	}
	if a.section+1 < len(m.sections) {
		end = m.sections[a.section+1]
	}
	m.vp.SetYOffset(start + int(a.within*float64(end-start)+0.5))
	if a.bottom {
		m.vp.GotoBottom()
	}
	m.pinned = -1
	if a.pinned {
		m.pinned = a.section
	}
}

func (m *Model) setContent(out string) {
	offset := m.vp.YOffset()
	if !m.rendered || out != m.out {
		// A new size with the same wrap width keeps the page as it is:
		// the app's first frames would otherwise split and index it again.
		m.out, m.lines, m.index = out, strings.Split(out, "\n"), nil
		m.sections = findSections(out, m.page.Sections)
		// The matches moved with the width; the current one stays current.
		m.hits = m.find(m.query)
		m.match = min(m.match, max(0, len(m.hits)-1))
		m.refresh()
	}
	m.rendered = true
	m.vp.SetYOffset(offset)
	if m.anchor != nil {
		m.goToAnchor(m.anchor)
		m.anchor = nil
	}
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

// refresh gives the viewport the page with the matches highlighted, the
// current one apart; the view stays where it is.
func (m *Model) refresh() {
	y := m.vp.YOffset()
	st := m.c.Styles
	m.vp.SetContentLines(highlight(m.lines, m.hits, m.match, st.Match, st.CurrentMatch))
	m.vp.SetYOffset(y)
}

// step moves to the next (+1) or previous (-1) match.
func (m *Model) step(d int) {
	m.match = (m.match + d + len(m.hits)) % len(m.hits)
	m.refresh()
	m.showMatch()
}

// showMatch scrolls the current match into view, a few lines from the top.
func (m *Model) showMatch() {
	if len(m.hits) == 0 {
		return
	}
	m.pinned = -1
	m.vp.SetYOffset(max(0, m.hits[m.match].first-3))
}

// Capturing reports whether the reader takes every key (the search box).
func (m *Model) Capturing() bool { return m.typing }

// render renders the page for the current width in the background, unless
// it is cached or already being rendered.
func (m *Model) render() tea.Cmd {
	k := m.key()
	if _, ok := m.c.Docs.Get(k); ok || k == m.pending {
		return nil
	}
	m.pending = k
	p := m.page
	return func() tea.Msg {
		out, err := markdown.Body(p, k.Width, k.Style)
		return renderedMsg{key: k, out: out, err: err}
	}
}

// Init renders the page for the window's width; before the first window
// size there is none yet, and the WindowSizeMsg renders it.
func (m *Model) Init() tea.Cmd {
	if m.c.Width == 0 {
		return nil
	}
	return m.render()
}

// Title names the page.
func (m *Model) Title() string { return m.page.Title }

// Update renders, scrolls, searches and jumps between sections.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case renderedMsg:
		if msg.key == m.pending {
			m.pending = common.DocKey{}
		}
		if msg.err != nil {
			m.err = msg.err
			return nil
		}
		m.c.Docs.Put(msg.key, msg.out)
		if msg.key == m.key() {
			m.setContent(msg.out)
		}
		return nil
	case tea.WindowSizeMsg:
		m.setSize()
		return m.render()
	case tea.PasteMsg:
		if !m.typing {
			return nil // not into the page: there is nowhere to put it
		}
		// The search box is one line: a pasted line break becomes a space.
		msg.Content = strings.Join(strings.Fields(msg.Content), " ")
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	case tea.KeyPressMsg:
		if m.anchor != nil {
			// A key while the page is wrapped again moves in the page
			// as it was: the anchor follows.
			defer func() { m.anchor = m.place() }()
		}
		if m.typing {
			return m.typeKey(msg)
		}
		if m.toc {
			return m.tocKey(msg)
		}
		k := m.c.Keys
		switch {
		case key.Matches(msg, k.Back):
			if m.query != "" {
				m.search("")
				return nil
			}
			return common.BackCmd
		case key.Matches(msg, k.Search):
			m.typing = true
			m.input.SetValue("") // a new search; n and N repeat the last one
			return m.input.Focus()
		case key.Matches(msg, k.NextMatch) && len(m.hits) > 0:
			m.step(+1)
			return nil
		case key.Matches(msg, k.PrevMatch) && len(m.hits) > 0:
			m.step(-1)
			return nil
		case key.Matches(msg, k.Contents):
			m.toc, m.tocAt = true, max(0, m.current())
			return nil
		case key.Matches(msg, k.MarkRead):
			slug, read := m.page.Slug, m.c.Progress.Get().IsRead(m.page.Slug)
			return m.c.Progress.Save(func(p *progress.Progress) {
				if read {
					delete(p.Read, slug)
				} else {
					p.MarkRead(slug, common.Now())
				}
			})
		case key.Matches(msg, k.Top):
			m.vp.GotoTop()
			m.pinned = -1
			return nil
		case key.Matches(msg, k.Bottom):
			m.vp.GotoBottom()
			m.pinned = -1
			return nil
		case key.Matches(msg, k.NextSection):
			m.jumpSection(+1)
			return nil
		case key.Matches(msg, k.PrevSection):
			m.jumpSection(-1)
			return nil
		}
	}
	before := m.vp.YOffset()
	var cmd tea.Cmd
	m.vp, cmd = m.vp.Update(msg)
	if m.vp.YOffset() != before {
		m.pinned = -1
	}
	return cmd
}

// typeKey edits the search; enter searches, esc gives up, ↑ brings back
// the last search.
func (m *Model) typeKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		m.typing = false
		m.input.Blur()
		m.search(strings.TrimSpace(m.input.Value()))
		return nil
	case "esc":
		m.typing = false
		m.input.Blur()
		return nil
	case "up":
		m.input.SetValue(m.query) // the last search, to edit
		m.input.CursorEnd()
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// tocKey moves in the table of contents; enter jumps, esc closes.
func (m *Model) tocKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
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
	return nil
}

// jumpSection goes to the next (dir +1) or previous (-1) section heading.
func (m *Model) jumpSection(dir int) {
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
func (m *Model) current() int {
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

// Stand is the section being read, for the next start to reopen too.
func (m *Model) Stand() common.Stand {
	at := progress.Place{Page: progress.PageReader, Name: m.page.Slug, Section: m.section()}
	return common.Stand{At: at, Reopens: true, Next: at}
}

// section returns the title of the section being read.
func (m *Model) section() string {
	if i := m.current(); i >= 0 && i < len(m.page.Sections) {
		return m.page.Sections[i].Title
	}
	return ""
}

// KeyMap is the reader's keys: in the footer, those of what is open (the
// search box, the contents, the matches), most important first.
func (m *Model) KeyMap() help.KeyMap {
	k := m.c.Keys
	enter := func(what string) key.Binding {
		return key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", what))
	}
	esc := func(what string) key.Binding { return key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", what)) }
	var short []key.Binding
	switch {
	case m.typing:
		last := key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "last search"))
		short = []key.Binding{enter("search"), esc("cancel"), last}
	case m.toc:
		short = []key.Binding{enter("go there"), k.Up, k.Down, esc("close")}
	case m.query != "":
		short = []key.Binding{k.NextMatch, k.PrevMatch, k.Search, k.NextSection, k.Contents, esc("clear search")}
	default:
		short = []key.Binding{k.NextSection, k.Contents, k.Search, k.MarkRead, k.Up, k.Down, k.Back}
	}
	return common.Bindings{
		Short: short,
		Full: [][]key.Binding{
			{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
			{k.NextSection, k.PrevSection, k.Contents, k.MarkRead},
			{k.Search, k.NextMatch, k.PrevMatch},
			{k.Present, k.Back, k.Help, k.Quit},
		},
	}
}
