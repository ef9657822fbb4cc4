package quizset

// The blanks of an order question with frames (the redraw): each step's
// blanks start empty, space puts the next choice into the one under the
// cursor, ←/→ go from blank to blank; a step keeps its blanks when it
// moves.

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/quiz"
)

// beginFrames empties every blank of q's frames and shuffles each blank's
// choices.
func (m *Model) beginFrames(q quiz.Question) {
	m.fills, m.blankShown, m.blank = nil, nil, 0
	for i, f := range q.Frames {
		m.fills = append(m.fills, slices.Repeat([]int{-1}, len(f.Blanks)))
		var shown []quiz.Shown
		for b, bl := range f.Blanks {
			shown = append(shown, m.showOrder(q.ID, fmt.Sprintf("step %d blank %d", i, b), len(bl.Choices)))
		}
		m.blankShown = append(m.blankShown, shown)
	}
}

// blankKeys are the keys of an order question's blanks.
var blankKeys = struct{ Prev, Next, Fill key.Binding }{
	Prev: key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/→", "blank")),
	Next: key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→", "next blank")),
	Fill: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "fill blank")),
}

// fillNext puts the next choice (in the order shown) into the blank under
// the cursor; an empty blank takes the first.
func (m *Model) fillNext() {
	step := m.order[m.cursor]
	shown := m.blankShown[step][m.blank]
	pos := shown.Position(m.fills[step][m.blank]) // -1 while empty
	m.fills[step][m.blank] = shown.Item((pos + 1) % len(shown))
}

// emptyBlanks counts the blanks not filled in yet.
func (m *Model) emptyBlanks() int {
	n := 0
	for _, f := range m.fills {
		for _, pick := range f {
			if pick < 0 {
				n++
			}
		}
	}
	return n
}

// framesView is an order question with frames: each step as its frame,
// its blanks filled in as the learner has them ("[?]" while empty, the
// blank under the cursor in «»), the choices of that blank, and once
// answered each position and blank marked, then the diagram's steps.
func (m *Model) framesView(q quiz.Question) string {
	st := m.c.Styles
	var b strings.Builder
	for pos, step := range m.order {
		cur := "  "
		if pos == m.cursor && !m.answered {
			cur = st.Cursor.Render("▸ ")
		}
		mark := ""
		if m.answered {
			mark = st.Bad.Render("✗ ")
			if m.result.Positions[pos] {
				mark = st.Good.Render("✓ ")
			}
		}
		f := q.Frames[step]
		text := f.Fill(func(bl int) string {
			v := "?"
			if pick := m.fills[step][bl]; pick >= 0 {
				v = f.Blanks[bl].Choices[pick]
			}
			switch {
			case m.answered && pos < len(m.result.Blanks) && bl < len(m.result.Blanks[pos]) && m.result.Blanks[pos][bl]:
				return "[" + v + " ✓]"
			case m.answered:
				return "[" + v + " ✗]"
			case pos == m.cursor && bl == m.blank:
				return "«" + v + "»"
			}
			return "[" + v + "]"
		})
		s := q.Steps[step]
		lanes := s.From + " → " + s.To
		if s.From == s.To {
			lanes = s.From
		}
		b.WriteString(common.Hang(cur+mark+fmt.Sprintf("%d. ", pos+1), lanes+": "+text, m.c.Width) + "\n")
	}
	if !m.answered {
		step := m.order[m.cursor]
		bl := q.Frames[step].Blanks[m.blank]
		var opts []string
		for _, i := range m.blankShown[step][m.blank] {
			opts = append(opts, bl.Choices[i])
		}
		b.WriteString("\n" + st.Subtle.Render(common.Hang("", "«"+bl.What+"»: "+strings.Join(opts, " · ")+" (space puts the next)", m.c.Width)) + "\n")
		if m.hint != "" {
			b.WriteString(st.Warn.Render(common.Hang("", m.hint, m.c.Width)) + "\n")
		}
		return b.String()
	}
	b.WriteString("\n" + st.Subtle.Render("The right order:") + "\n")
	for pos, s := range q.Steps {
		b.WriteString(common.Hang(fmt.Sprintf("  %d. ", pos+1), s.String(), m.c.Width) + "\n")
	}
	return b.String()
}
