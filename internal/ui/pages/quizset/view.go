package quizset

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/checklist"
	"github.com/learn-idempotency/learn/internal/ui/components/textbox"
	"github.com/learn-idempotency/learn/pgtemp"
	"github.com/learn-idempotency/learn/quiz"
)

// View shows the title line, then the question, scrolled to follow its end
// when it is taller than the window.
func (m *Model) View() string {
	if m.done {
		return m.scroll.View(m.summary(), m.c.Width, m.c.Body())
	}
	title := m.title()
	body, h := m.body(), m.c.Body()-lipgloss.Height(title)
	if m.reveal {
		m.reveal = false
		return title + "\n" + m.scroll.ViewAt(body, m.c.Width, h, m.keepFrom, m.keepTo)
	}
	return title + "\n" + m.scroll.View(body, m.c.Width, h)
}

// title names the set, the question's source and its place, on one line;
// when the source is cut there, the body's first line has it whole.
func (m *Model) title() string {
	return common.Header(m.c.Styles, m.set.Title, m.titleRest(), m.place(), m.c.Width)
}

func (m *Model) titleRest() string { return " · " + m.q().Source }

func (m *Model) place() string {
	return fmt.Sprintf("question %d of %d", m.idx+1, len(m.set.Questions))
}

// sourceCut reports whether the title line had to cut the source.
func (m *Model) sourceCut() bool {
	return lipgloss.Width(m.set.Title+m.titleRest())+1+lipgloss.Width(m.place()) > m.c.Width
}

// prose wraps s at a question's reading width: the page's, at most 100
// columns.
func (m *Model) prose(s string) string {
	return lipgloss.NewStyle().Width(min(m.c.Width, 100)).Render(s)
}

// body is the whole question.
func (m *Model) body() string {
	st := m.c.Styles
	w := m.c.Width
	var b strings.Builder
	q := m.q()
	if m.sourceCut() {
		b.WriteString(st.Subtle.Render(common.Hang("from ", q.Source, w)) + "\n")
	}
	if m.idx == 0 && m.set.Intro != "" && !m.answered {
		b.WriteString(st.Subtle.Render(m.prose(m.set.Intro)) + "\n")
	}
	b.WriteString("\n" + st.Caption.Render(m.prose(q.Prompt)) + "\n\n")
	switch q.Kind {
	case quiz.KindSingle, quiz.KindMultiple:
		b.WriteString(m.choicesView(q.Choices, m.shown, q.Correct, q.Kind == quiz.KindMultiple))
		if m.hint != "" {
			b.WriteString("\n" + st.Warn.Render(m.prose(m.hint)) + "\n")
		}
	case quiz.KindOrder:
		b.WriteString(m.orderView(q))
	case quiz.KindShort:
		view, from, to := m.shortView(q)
		above := lipgloss.Height(b.String()) - 1
		m.keepFrom, m.keepTo = above+from, above+to
		b.WriteString(view)
	case quiz.KindLive:
		b.WriteString(m.liveView(q))
	case quiz.KindPredict:
		b.WriteString(m.predictView(q))
	}
	if m.answered {
		b.WriteString("\n" + m.verdict() + "\n")
		if q.Explain != "" {
			b.WriteString(m.prose(q.Explain) + "\n")
		}
	}
	if m.live.err != nil {
		b.WriteString("\n" + st.Bad.Render(m.prose(m.live.err.Error())) + "\n")
	}
	return b.String()
}

// choicesView lists choices in the order shown, with the cursor (a
// position), the picks and, once answered, which were right (items).
func (m *Model) choicesView(choices []string, shown quiz.Shown, correct []int, multi bool) string {
	st := m.c.Styles
	var b strings.Builder
	right := map[int]bool{}
	for _, c := range correct {
		right[c] = true
	}
	for pos, i := range shown {
		c := choices[i]
		cur := "  "
		if pos == m.cursor && !m.answered {
			cur = st.Cursor.Render("▸ ")
		}
		box := ""
		if multi {
			box = "[ ] "
			if m.picked[i] {
				box = "[x] "
			}
		}
		mark := ""
		if m.answered {
			switch {
			case right[i]:
				mark = st.Good.Render(" ✓")
			case m.picked[i] || (!multi && pos == m.cursor):
				mark = st.Bad.Render(" ✗")
			}
		}
		b.WriteString(common.Hang(cur+box, c, m.c.Width-2) + mark + "\n")
	}
	return b.String()
}

func (m *Model) orderView(q quiz.Question) string {
	if len(q.Frames) > 0 {
		return m.framesView(q)
	}
	st := m.c.Styles
	var b strings.Builder
	for pos, i := range m.order {
		cur := "  "
		if pos == m.cursor && !m.answered {
			cur = st.Cursor.Render("▸ ")
		}
		prefix := cur + fmt.Sprintf("%d. ", pos+1)
		if m.answered {
			if m.result.Positions[pos] {
				prefix = cur + st.Good.Render("✓ ") + fmt.Sprintf("%d. ", pos+1)
			} else {
				prefix = cur + st.Bad.Render("✗ ") + fmt.Sprintf("%d. ", pos+1)
			}
		}
		b.WriteString(common.Hang(prefix, q.Steps[i].String(), m.c.Width) + "\n")
	}
	if m.answered {
		b.WriteString("\n" + st.Subtle.Render("The right order:") + "\n")
		for pos, s := range q.Steps {
			b.WriteString(common.Hang(fmt.Sprintf("  %d. ", pos+1), s.String(), m.c.Width) + "\n")
		}
	}
	return b.String()
}

// shortView is a short answer: the text box while the learner writes,
// then their text, the model answer and the points to tick (checklist),
// with the lines of the point under the cursor.
func (m *Model) shortView(q quiz.Question) (view string, from, to int) {
	if m.typing {
		if full := textbox.Full(m.c.Styles, m.text); full != "" {
			return m.text.View() + "\n" + full + "\n", 0, 0
		}
		return m.text.View() + "\n", 0, 0
	}
	cursor := m.cursor
	if m.answered {
		cursor = -1
	}
	return checklist.Checklist{Typed: m.text.Value(), Model: q.Model, Points: q.Points, Cues: q.Cues, Ticked: m.ticked, Cursor: cursor}.View(m.c.Styles, m.c.Width)
}

// verdict says how the answer scored.
func (m *Model) verdict() string {
	st := m.c.Styles
	r := m.result
	switch {
	case r.Correct:
		return st.Good.Render("Right.")
	case r.Score > 0:
		out := st.Warn.Render(fmt.Sprintf("Partly right: %.0f%%.", r.Score*100))
		if len(r.Missed) > 0 && m.q().Kind != quiz.KindPredict { // a prediction's misses are in its table
			out += st.Subtle.Render(" Missed: " + strings.Join(r.Missed, "; "))
		}
		if len(r.Unsaid) > 0 {
			out += st.Subtle.Render(" Ticked but not in your text, so counted " + checklist.Half() + ": " + strings.Join(r.Unsaid, "; "))
		}
		return m.prose(out)
	}
	return st.Bad.Render("Not this time.")
}

// summary is the end of an attempt: each question's score and the total.
func (m *Model) summary() string {
	st := m.c.Styles
	var b strings.Builder
	var rs []quiz.Result
	b.WriteString(st.Title.Render(m.set.Title+": done") + "\n\n")
	for i, q := range m.set.Questions {
		r := m.results[i]
		mark, score := st.Faint.Render("·"), "skipped"
		if r != nil {
			rs = append(rs, *r)
			score = fmt.Sprintf("%3.0f%%", r.Score*100)
			switch {
			case r.Correct:
				mark = st.Good.Render("✓")
			case r.Score > 0:
				mark = st.Warn.Render("◐")
			default:
				mark = st.Bad.Render("✗")
			}
		}
		b.WriteString(common.Hang(fmt.Sprintf("%s %s  ", mark, score), q.Prompt, m.c.Width) + "\n")
	}
	sp := m.c.Progress.Get().Set(m.set.ID)
	b.WriteString(fmt.Sprintf("\nScore %.0f%% · best %.0f%% over %s\n", quiz.Score(rs)*100, sp.Best*100, common.Count(sp.Attempts, "attempt")))
	hint := "r tries again, enter or esc goes home"
	if m.c.DB != nil && m.c.DB.Health().State == pgtemp.Gone {
		hint = "learn's PostgreSQL is gone and could not be started again: q quits, and the next learn starts a new one; enter or esc goes home"
	}
	b.WriteString(st.Subtle.Render(hint) + "\n")
	return b.String()
}
