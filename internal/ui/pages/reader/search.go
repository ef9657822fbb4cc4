package reader

import (
	"strings"
	"unicode"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// hit is one match of the search on the rendered page: the cells it covers
// on each line it spans (a phrase the wrapping split runs over two lines).
type hit struct {
	first int            // the line it starts on
	cells map[int][2]int // line → [start, end) in cells
}

// where is the cell a byte of the search text comes from.
type where struct{ line, col, width int }

// text is the rendered page as one searchable string: lower case, each
// line's text without its margins, lines joined by a space and every run of
// spaces made one, so that a phrase matches whichever way the page wrapped.
type text struct {
	flat string
	at   []where // for each byte of flat; line -1 for the spaces in between
}

// newText indexes the page's plain lines.
func newText(lines []string) text {
	var b strings.Builder
	var at []where
	space := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
			b.WriteByte(' ')
			at = append(at, where{line: -1})
		}
	}
	for i, l := range lines {
		space()
		col := 0
		g := uniseg.NewGraphemes(l)
		for g.Next() {
			s, w := g.Str(), g.Width()
			if strings.TrimSpace(s) == "" {
				space()
			} else {
				s = strings.Map(unicode.ToLower, s)
				b.WriteString(s)
				for range len(s) {
					at = append(at, where{line: i, col: col, width: w})
				}
			}
			col += w
		}
	}
	return text{flat: b.String(), at: at}
}

// normalize is q as the page's text is indexed: lower case, spaces made one.
func normalize(q string) string { return strings.ToLower(strings.Join(strings.Fields(q), " ")) }

// find returns every match of q, in order.
func (t text) find(q string) []hit {
	q = normalize(q)
	if q == "" {
		return nil
	}
	var hits []hit
	for from := 0; ; {
		i := strings.Index(t.flat[from:], q)
		if i < 0 {
			return hits
		}
		start, end := from+i, from+i+len(q)
		h := hit{first: t.at[start].line, cells: map[int][2]int{}}
		for j := start; j < end; j++ {
			w := t.at[j]
			if w.line < 0 {
				continue
			}
			r, ok := h.cells[w.line]
			if !ok {
				r = [2]int{w.col, w.col + w.width}
			}
			r[0], r[1] = min(r[0], w.col), max(r[1], w.col+w.width)
			h.cells[w.line] = r
		}
		hits = append(hits, h)
		from = end
	}
}

// highlight styles the cells of every hit on lines (the rendered page),
// the current one (index cur) in its own style; it returns a new slice.
func highlight(lines []string, hits []hit, cur int, other, current lipgloss.Style) []string {
	out := append([]string(nil), lines...)
	ranges := map[int][]lipgloss.Range{}
	for i, h := range hits {
		st := other
		if i == cur {
			st = current
		}
		for line, c := range h.cells {
			ranges[line] = append(ranges[line], lipgloss.NewRange(c[0], c[1], st))
		}
	}
	for line, rs := range ranges {
		if line < len(out) {
			out[line] = lipgloss.StyleRanges(out[line], rs...) // hits are in order and never overlap
		}
	}
	return out
}

// find returns every match of q in the page, indexing its text at the
// first search: a page opened and read without one never pays for it.
func (m *Model) find(q string) []hit {
	if normalize(q) == "" {
		return nil
	}
	if m.index == nil {
		t := newText(strings.Split(ansi.Strip(m.out), "\n"))
		m.index = &t
	}
	return m.index.find(q)
}

// search finds q (any case, any spacing, across the page's line breaks)
// and goes to the first match at or below the top of the view.
func (m *Model) search(q string) {
	m.query, m.match = q, 0
	m.hits = m.find(q)
	for i, h := range m.hits {
		if h.first >= m.vp.YOffset() {
			m.match = i
			break
		}
	}
	m.refresh()
	m.showMatch()
}
