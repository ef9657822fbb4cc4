package quizset

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/checklist"
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

// body is the whole question.
func (m *Model) body() string {
	st := m.c.Styles
	w := m.c.Width
	wrap := lipgloss.NewStyle().Width(min(w, 100))
	var b strings.Builder
	q := m.q()
	if m.sourceCut() {
		b.WriteString(st.Subtle.Render(common.Hang("from ", q.Source, w)) + "\n")
	}
	if m.idx == 0 && m.set.Intro != "" && !m.answered {
		b.WriteString(st.Subtle.Render(wrap.Render(m.set.Intro)) + "\n")
	}
	b.WriteString("\n" + st.Caption.Render(wrap.Render(q.Prompt)) + "\n\n")
	switch q.Kind {
	case quiz.KindSingle, quiz.KindMultiple:
		b.WriteString(m.choicesView(q.Choices, m.shown, q.Correct, q.Kind == quiz.KindMultiple))
		if m.hint != "" {
			b.WriteString("\n" + st.Warn.Render(wrap.Render(m.hint)) + "\n")
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
			b.WriteString(wrap.Render(q.Explain) + "\n")
		}
	}
	if m.live.err != nil {
		b.WriteString("\n" + st.Bad.Render(wrap.Render(m.live.err.Error())) + "\n")
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

// shortView is a short answer: the text box while the learner writes,
// then their text, the model answer and the points to tick (checklist),
// with the lines of the point under the cursor.
func (m *Model) shortView(q quiz.Question) (view string, from, to int) {
	if m.typing {
		return m.text.View() + "\n", 0, 0
	}
	cursor := m.cursor
	if m.answered {
		cursor = -1
	}
	return checklist.Checklist{Typed: m.text.Value(), Model: q.Model, Points: q.Points, Cues: q.Cues, Ticked: m.ticked, Cursor: cursor}.View(m.c.Styles, m.c.Width)
}

// liveView is a live question: the run, the cause, where to look, the run
// beside it.
func (m *Model) liveView(q quiz.Question) string {
	st := m.c.Styles
	wrap := lipgloss.NewStyle().Width(min(m.c.Width, 100))
	var b strings.Builder
	name := fmt.Sprintf("%s, %s design", q.Live.Scenario, q.Live.Variant)
	switch {
	case m.live.running:
		doing := " running it on PostgreSQL…" // the scenario's name would give the cause away
		if ready, _, err := m.c.DB.Status(); !ready && err == nil {
			doing = " waiting for PostgreSQL: " + common.Ellipsis(m.c.DB.Progress())
		}
		if why := m.live.symptomRun.Waiting(); why != "" {
			doing = " " + why // other learners' runs hold the connections (a workshop)
		}
		b.WriteString(m.spin.View() + st.Subtle.Render(strings.TrimPrefix(common.Hang("  ", strings.TrimPrefix(doing, " "), m.c.Width), " ")) + "\n")
		return b.String()
	case m.live.symptom == nil:
		b.WriteString(st.Warn.Render(wrap.Render("This question runs the design live on PostgreSQL, which is not available here. "+
			"Esc goes back; `learn doctor` says how to get one.")) + "\n")
		return b.String()
	}
	// Until both picks are made the run shows only its evidence, the
	// symptom as a user would see it: its name and its tally of keys would
	// say the cause.
	if m.answered {
		b.WriteString(st.BoxTitle.Render("Live run ("+name+"):") + "\n" + symptomLines(*m.live.symptom, m.c.Width) + "\n")
	} else {
		b.WriteString(st.BoxTitle.Render("What the run showed:") + "\n" + evidenceLines(*m.live.symptom, m.c.Width) + "\n")
	}
	if !m.live.causeChosen {
		b.WriteString(st.Subtle.Render("What causes it?") + "\n")
		b.WriteString(m.choicesView(q.Choices, m.shown, nil, false))
		return b.String()
	}
	b.WriteString(m.pickLine("Cause", q.Choices, q.Correct[0], m.live.cause, m.answered))
	if !m.answered {
		b.WriteString("\n" + st.Subtle.Render("Where do you look?") + "\n")
		b.WriteString(m.choicesView(q.Live.Where, m.whereShown, nil, false))
		return b.String()
	}
	b.WriteString(m.pickLine("Where", q.Live.Where, q.Live.WhereCorrect, m.live.where, true))
	besideName := fmt.Sprintf("%s, %s design", q.Live.Scenario, q.Live.Beside)
	switch {
	case m.live.besideRunning && m.live.besideRun.Waiting() != "":
		b.WriteString("\n" + m.spin.View() + st.Subtle.Render(common.Hang(" ", m.live.besideRun.Waiting(), m.c.Width-1)) + "\n")
	case m.live.besideRunning:
		b.WriteString("\n" + m.spin.View() + st.Subtle.Render(" running "+besideName+" beside it…") + "\n")
	case m.live.beside != nil:
		b.WriteString("\n" + st.BoxTitle.Render("Beside it ("+besideName+"):") + "\n" + symptomLines(*m.live.beside, m.c.Width) + "\n")
		if q.Live.BesideNote != "" {
			b.WriteString(wrap.Render(q.Live.BesideNote) + "\n")
		}
	}
	return b.String()
}

// pickLine is the learner's pick, marked right or wrong once answered,
// with the right one after a wrong pick.
func (m *Model) pickLine(label string, choices []string, right, picked int, answered bool) string {
	st := m.c.Styles
	line := common.Hang(st.Subtle.Render(label+": "), choices[picked], m.c.Width-2)
	switch {
	case !answered:
	case picked == right:
		line += st.Good.Render(" ✓")
	default:
		line += st.Bad.Render(" ✗") + "\n" + common.Hang(st.Subtle.Render(strings.Repeat(" ", len(label)-2)+"it was: "), choices[right], m.c.Width-2)
	}
	return line + "\n"
}

// evidenceLines shows what a run shows before its cause is named
// (quiz.Symptom.Evidence), wrapped, never cut.
func evidenceLines(s quiz.Symptom, w int) string {
	lines := s.Evidence()
	for i, l := range lines {
		lines[i] = common.Hang("  ", l, w)
	}
	return strings.Join(lines, "\n")
}

// symptomLines shows a run's numbers, keys included, once the question is
// answered.
func symptomLines(s quiz.Symptom, w int) string {
	statuses := make([]string, len(s.Statuses))
	for i, st := range s.Statuses {
		statuses[i] = fmt.Sprint(st)
	}
	lines := []string{
		fmt.Sprintf("  answers %s · %d lost · %s, %s, %s", strings.Join(statuses, " "), s.Lost,
			common.Count(s.Intents, "intent"), common.Count(s.Keys, "key"), common.Count(s.Tries, "try")),
		fmt.Sprintf("  %s · %d seats taken", common.Count(s.Rows, "booking row"), s.Seats),
	}
	for _, msg := range s.Messages {
		lines = append(lines, "  message: "+msg)
	}
	if len(s.Broken) > 0 {
		lines = append(lines, "  invariants broken: "+strings.Join(s.Broken, "; "))
	} else {
		lines = append(lines, "  every invariant holds")
	}
	for i, l := range lines {
		lines[i] = common.Hang("  ", strings.TrimPrefix(l, "  "), w) // wrapped, never cut
	}
	return strings.Join(lines, "\n")
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
		return lipgloss.NewStyle().Width(min(m.c.Width, 100)).Render(out)
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
	b.WriteString(st.Subtle.Render("r tries again, enter or esc goes home") + "\n")
	return b.String()
}
