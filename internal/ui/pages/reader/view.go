package reader

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/learn-idempotency/learn/internal/ui/common"
)

// head is the header, on one line: the page's title in the title style,
// the section subtle, the position at the right edge. What does not fit
// is cut with "…": the contents (t) and the page itself have it whole.
func (m *Model) head() string {
	pct := fmt.Sprintf("%3.0f%%", m.vp.ScrollPercent()*100)
	if m.c.Progress.Get().IsRead(m.page.Slug) {
		pct = "✓ read · " + pct
	}
	rest := ""
	if s := m.section(); s != "" {
		rest = " · " + s
	}
	if m.c.Presenting {
		pct = fmt.Sprintf("section %d of %d  %s", max(m.current(), 0)+1, len(m.page.Sections), m.c.Clock())
	}
	return common.Header(m.c.Styles, m.page.Title, rest, pct, m.c.Width)
}

// fitHeight makes the viewport the height under the header: the body
// (the window without the footer, or all of it in presenter mode, which
// the root may switch between frames with P).
func (m *Model) fitHeight() {
	if h := max(1, m.c.Body()-1); m.vp.Height() != h {
		m.vp.SetHeight(h)
	}
}

// View draws the header and the page.
func (m *Model) View() string {
	st := m.c.Styles
	m.fitHeight() // presenter mode is known only now
	head := m.head()
	var body string
	switch {
	case m.err != nil:
		body = st.Bad.Render(m.err.Error())
	case !m.rendered:
		body = st.Subtle.Render("rendering…")
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
func (m *Model) searchLine() string {
	st := m.c.Styles
	switch {
	case m.typing:
		return m.input.View()
	case m.query != "" && len(m.hits) == 0:
		return st.Warn.Render(m.fit(fmt.Sprintf("/%s: not on this page", m.query), " (esc clears)"))
	case m.query != "":
		return st.Subtle.Render(m.fit(fmt.Sprintf("/%s: match %d of %d", m.query, m.match+1, len(m.hits)), " (n next, N previous, esc clears)"))
	}
	return ""
}

// fit is what, followed by hint when both fit the window (the footer has
// the same keys); a query too long for the window is the learner's own
// text, cut.
func (m *Model) fit(what, hint string) string {
	if ansi.StringWidth(what+hint) <= m.c.Width {
		return what + hint
	}
	return common.Truncate(what, m.c.Width)
}

// contents is the table of contents.
func (m *Model) contents() string {
	st := m.c.Styles
	var b strings.Builder
	b.WriteString(st.Title.Render("Contents") + st.Subtle.Render("  (enter goes there, esc closes)") + "\n\n")
	for i, s := range m.page.Sections {
		if i >= len(m.sections) {
			break
		}
		if i == m.tocAt {
			b.WriteString(st.Cursor.Render("▸ ") + st.Selected.Render(s.Title) + "\n")
		} else {
			b.WriteString(st.Item.Render(s.Title) + "\n")
		}
	}
	return b.String()
}
