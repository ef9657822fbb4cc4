package main

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/quiz"
)

// drillPhase is where the drill stands.
type drillPhase int

const (
	drillIntro   drillPhase = iota // the countdown can be set
	drillPrompts                   // the spoken answers, against the countdown
	drillCards                     // the flashcards due
	drillDone
)

// drillModel is the timed interview drill: each spoken prompt against a
// visible countdown (type or just speak), then the model answer and its key
// points to tick; then the follow-ups and counter-questions due today, as
// flashcards rated again / hard / good / easy.
type drillModel struct {
	c     *common
	drill quiz.Drill
	phase drillPhase

	// Spoken prompts.
	scroll    scroller
	pi        int
	text      textBox
	textReady bool // text was made (the zero textarea must not be used)
	remaining time.Duration
	revealed  bool
	ticked    []bool
	cursor    int
	graded    *quiz.Result
	tick      int // token of the running countdown

	// Flashcards.
	due      []quiz.Card
	ci       int
	showBack bool
	rated    map[quiz.Rating]int
}

// countdownMsg is one second of the countdown.
type countdownMsg struct{ token int }

func newDrill(c *common) *drillModel {
	return &drillModel{c: c, drill: quiz.Interview(), rated: map[quiz.Rating]int{}, scroll: newScroller()}
}

func (m *drillModel) seconds() int { return m.c.prog.Seconds() }

// startPrompt shows prompt pi with a fresh text box and starts the clock.
func (m *drillModel) startPrompt() tea.Cmd {
	m.phase, m.revealed, m.graded, m.cursor = drillPrompts, false, nil, 0
	m.scroll.reset()
	m.ticked = make([]bool, len(m.drill.Prompts[m.pi].Points))
	m.text, m.textReady = newTextBox("type your answer, or say it aloud (tab when done)", m.c.width, 5), true
	m.remaining = time.Duration(m.seconds()) * time.Second
	m.tick++
	return tea.Batch(m.text.Focus(), m.second())
}

func (m *drillModel) second() tea.Cmd {
	token := m.tick
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return countdownMsg{token: token} })
}

// startCards takes the cards due now.
func (m *drillModel) startCards() {
	m.phase, m.ci, m.showBack = drillCards, 0, false
	m.due = quiz.Due(m.c.prog, m.drill.Cards, now())
	if len(m.due) == 0 {
		m.phase = drillDone
	}
}

// capturing reports whether the text box takes every key.
func (m *drillModel) capturing() bool { return m.phase == drillPrompts && !m.revealed }

func (m *drillModel) Update(msg tea.Msg) (*drillModel, tea.Cmd) {
	switch msg := msg.(type) {
	case countdownMsg:
		if msg.token != m.tick || m.phase != drillPrompts || m.revealed {
			return m, nil
		}
		m.remaining -= time.Second
		if m.remaining <= 0 {
			m.reveal()
			return m, nil
		}
		return m, m.second()
	case tea.WindowSizeMsg:
		if m.textReady {
			m.text.SetWidth(textWidth(msg.Width))
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *drillModel) reveal() {
	m.revealed, m.remaining = true, max(m.remaining, 0)
	m.text.Blur()
}

func (m *drillModel) key(msg tea.KeyPressMsg) (*drillModel, tea.Cmd) {
	k := m.c.keys
	if !m.capturing() && m.scroll.key(msg, k) {
		return m, nil
	}
	switch m.phase {
	case drillIntro:
		switch {
		case key.Matches(msg, k.Faster):
			s := quiz.ClampSeconds(m.seconds() + 5)
			return m, m.c.save(func(p *quiz.Progress) { p.DrillSeconds = s })
		case key.Matches(msg, k.Slower):
			s := quiz.ClampSeconds(m.seconds() - 5)
			return m, m.c.save(func(p *quiz.Progress) { p.DrillSeconds = s })
		case key.Matches(msg, k.Open):
			return m, m.startPrompt()
		case msg.String() == "c":
			m.startCards()
		case key.Matches(msg, k.Back):
			return m, back
		}
	case drillPrompts:
		if !m.revealed {
			done, cmd := typeInto(&m.text, msg)
			if done {
				m.reveal()
			}
			return m, cmd
		}
		switch {
		case key.Matches(msg, k.Back):
			return m, back
		case m.graded != nil && key.Matches(msg, k.Open):
			if m.pi+1 < len(m.drill.Prompts) {
				m.pi++
				return m, m.startPrompt()
			}
			m.startCards()
		case m.graded != nil:
		case key.Matches(msg, k.Up):
			m.cursor = max(0, m.cursor-1)
		case key.Matches(msg, k.Down):
			m.cursor = min(len(m.ticked)-1, m.cursor+1)
		case key.Matches(msg, k.Toggle):
			m.ticked[m.cursor] = !m.ticked[m.cursor]
		case key.Matches(msg, k.Open):
			p := m.drill.Prompts[m.pi]
			r, err := quiz.GradeSpoken(p, m.ticked)
			if err != nil {
				return m, nil
			}
			m.graded = &r
			id := p.ID
			return m, m.c.save(func(pr *quiz.Progress) { pr.Record(quiz.SetInterview, id, r.Score, now()) })
		}
	case drillCards:
		if key.Matches(msg, k.Back) {
			return m, back
		}
		if !m.showBack {
			if key.Matches(msg, k.Open, k.Toggle) {
				m.showBack = true
			}
			return m, nil
		}
		g, ok := map[string]quiz.Rating{"1": quiz.Again, "2": quiz.Hard, "3": quiz.Good, "4": quiz.Easy,
			"a": quiz.Again, "h": quiz.Hard, "g": quiz.Good, "e": quiz.Easy}[msg.String()]
		if !ok {
			return m, nil
		}
		id, at := m.due[m.ci].ID, now()
		m.rated[g]++
		cmd := m.c.save(func(p *quiz.Progress) { p.Rate(id, g, at) })
		m.ci, m.showBack = m.ci+1, false
		if m.ci >= len(m.due) {
			m.phase = drillDone
		}
		return m, cmd
	case drillDone:
		if key.Matches(msg, k.Back, k.Open) {
			return m, back
		}
	}
	return m, nil
}

func (m *drillModel) bindings() bindings {
	k := m.c.keys
	enter := func(what string) key.Binding {
		return key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", what))
	}
	var short []key.Binding
	switch {
	case m.phase == drillIntro:
		short = []key.Binding{
			key.NewBinding(key.WithKeys("+", "-"), key.WithHelp("+/-", "countdown ±5 s")),
			enter("start"), key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cards only")), k.Back}
	case m.phase == drillPrompts && !m.revealed:
		short = []key.Binding{key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "done")), k.Back}
	case m.phase == drillPrompts && m.graded == nil:
		short = []key.Binding{k.Up, k.Down, k.Toggle, enter("grade"), k.Back}
	case m.phase == drillPrompts:
		short = []key.Binding{enter("next"), k.Back}
	case m.phase == drillCards && !m.showBack:
		short = []key.Binding{enter("show the answer"), k.Back}
	case m.phase == drillCards:
		short = []key.Binding{key.NewBinding(key.WithKeys("1", "2", "3", "4"), key.WithHelp("1-4", "again/hard/good/easy")), k.Back}
	default:
		short = []key.Binding{k.Back}
	}
	return bindings{short: short, full: [][]key.Binding{short, {k.Help, k.Quit}}}
}

// View is the drill, scrolled to its end (the countdown is on the title
// line, which stays).
func (m *drillModel) View() string {
	return m.c.st.title.Render("Interview drill") + "\n" + m.scroll.view(m.body(), m.c.width, m.c.height-2)
}

func (m *drillModel) body() string {
	st := m.c.st
	wrap := lipgloss.NewStyle().Width(min(m.c.width, 100))
	var b strings.Builder
	b.WriteString("\n")
	switch m.phase {
	case drillIntro:
		dueNow := len(quiz.Due(m.c.prog, m.drill.Cards, now()))
		later := quiz.DueToday(m.c.prog, m.drill.Cards, now()) - dueNow
		cards := countOf(dueNow, "card") + " due now"
		if later > 0 {
			cards += fmt.Sprintf(", %d more later today", later)
		}
		b.WriteString(wrap.Render(fmt.Sprintf("%d questions to answer aloud or in writing, each against a countdown of %d seconds "+
			"(a good spoken answer takes 20 to 30), then the model answer and its key points to tick. "+
			"After them, the follow-ups and counter-questions as flashcards: %s.",
			len(m.drill.Prompts), m.seconds(), cards)) + "\n\n")
		b.WriteString(st.subtle.Render(fmt.Sprintf("Countdown: %d s (+/- to change, 10 to 120)", m.seconds())) + "\n")
	case drillPrompts:
		p := m.drill.Prompts[m.pi]
		clock := fmt.Sprintf("%d:%02d", int(m.remaining.Minutes()), int(m.remaining.Seconds())%60)
		style := st.current
		if m.remaining <= 5*time.Second {
			style = st.bad
		}
		b.WriteString(st.subtle.Render(fmt.Sprintf("Question %d of %d · %s", m.pi+1, len(m.drill.Prompts), p.Source)) + "   " + style.Render("⏱ "+clock) + "\n\n")
		b.WriteString(st.caption.Render(wrap.Render(p.Question)) + "\n\n")
		if !m.revealed {
			b.WriteString(m.text.View() + "\n")
			break
		}
		if v := strings.TrimSpace(m.text.Value()); v != "" {
			b.WriteString(st.subtle.Render("You wrote:") + "\n" + wrap.Render(v) + "\n\n")
		}
		b.WriteString(st.subtle.Render("The model answer:") + "\n" + wrap.Render(p.Model) + "\n\n")
		b.WriteString(st.subtle.Render("Tick the points you made (space), then enter:") + "\n")
		for i, pt := range p.Points {
			cur := "  "
			if i == m.cursor && m.graded == nil {
				cur = st.cursor.Render("▸ ")
			}
			box := "[ ] "
			if m.ticked[i] {
				box = "[x] "
			}
			b.WriteString(hang(cur+box, pt, m.c.width-2) + "\n")
		}
		if m.graded != nil {
			b.WriteString("\n" + st.good.Render(fmt.Sprintf("%.0f%% of the key points.", m.graded.Score*100)) + "\n")
		}
	case drillCards:
		c := m.due[m.ci]
		b.WriteString(st.subtle.Render(fmt.Sprintf("Card %d of %d due · %s", m.ci+1, len(m.due), c.Source)) + "\n\n")
		b.WriteString(st.caption.Render(wrap.Render(plainMarkdown(c.Front))) + "\n\n")
		if m.showBack {
			b.WriteString(wrap.Render(plainMarkdown(c.Back)) + "\n\n")
			b.WriteString(st.subtle.Render("How well did you recall it? 1 again · 2 hard · 3 good · 4 easy") + "\n")
		} else {
			b.WriteString(st.subtle.Render("Answer it in your head, then enter shows the answer.") + "\n")
		}
	case drillDone:
		b.WriteString("Done for now.\n")
		if n := len(m.due); n > 0 {
			b.WriteString(fmt.Sprintf("%s reviewed: %d again, %d hard, %d good, %d easy.\n", countOf(n, "card"),
				m.rated[quiz.Again], m.rated[quiz.Hard], m.rated[quiz.Good], m.rated[quiz.Easy]))
		}
		if next, ok := nextDue(m.c.prog, m.drill.Cards); ok {
			b.WriteString(st.subtle.Render("Next card due "+next.Local().Format("Mon 2 Jan 15:04")) + "\n")
		}
	}
	return b.String()
}

// nextDue is when the next card falls due.
func nextDue(p *quiz.Progress, cards []quiz.Card) (time.Time, bool) {
	var first time.Time
	for _, c := range cards {
		r, ok := p.Drill[c.ID]
		if !ok {
			return now(), true
		}
		if first.IsZero() || r.Due.Before(first) {
			first = r.Due
		}
	}
	return first, !first.IsZero()
}

// plainMarkdown drops the Markdown markers a card's text may carry.
func plainMarkdown(s string) string {
	return strings.NewReplacer("**", "", "`", "", "### ", "").Replace(s)
}
